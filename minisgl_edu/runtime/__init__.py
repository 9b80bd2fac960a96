"""The in-process runtime: the server's components in one process, for notebooks and widgets.

from minisgl_edu.runtime import LocalServer
srv = LocalServer(model="smollm2-135m", device="cpu")
uid = srv.submit([{"role": "user", "content": "What is KV Cache?"}], SamplingParams(max_tokens=32))
snap = srv.step()            # one scheduler iteration, then look inside
srv.run_until_idle(); srv.result(uid).text
"""

from minisgl_edu.runtime.local import LocalServer, RequestResult
from minisgl_edu.runtime.snapshot import BatchItemView, BatchView, RequestView, Snapshot

__all__ = ["BatchItemView", "BatchView", "LocalServer", "RequestResult", "RequestView", "Snapshot"]
