from cells import code, md

CELLS = [
md(r"""
# 02 · The path of a request

**Goal:** start the real server, send one streaming chat request, see the processes, then follow
that request's uid through `TokenizeMsg → UserMsg → DetokenizeMsg → UserReply → data: [DONE]`,
naming the file and function that handles each hop.
**Expected time:** 30 minutes (the cells run in well under a minute).

Chapter 01 listed the components. Here we watch them work, first from the outside (HTTP and the
process list), then from the inside (the trace of one uid).
"""),
code(r'''
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
import socket
import subprocess
import sys
import time

import httpx
'''),
md(r"""
## 1. Start the server

In a terminal you would type `python -m minisgl_edu.serve` (port 1919). Here we start it as a
subprocess on a free port, with a small KV cache, and wait for the line `ready in ... s` (the main
process prints it only after every worker has reported that it loaded what it needs) and for
`/health` to answer.
"""),
code(r'''
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]

log = open("server.log", "w")
server = subprocess.Popen(
    [sys.executable, "-m", "minisgl_edu.serve", "--port", str(port), "--device", "cpu", "--num-pages", "256"],
    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}"



def healthy() -> bool:
    try:
        return httpx.get(url + "/health", timeout=5).status_code == 200
    except httpx.TransportError:  # not listening yet
        return False


deadline = time.monotonic() + 180
while not ("ready in" in open("server.log").read() and healthy()):
    assert server.poll() is None, open("server.log").read()  # it died: show why
    assert time.monotonic() < deadline, "the server did not start in 3 minutes:\n" + open("server.log").read()
    time.sleep(0.5)
print("server ready:", httpx.get(url + "/health", timeout=10).json())
'''),
md(r"""
## 2. Look at the processes

`server/launch.py` (`start_workers`) starts each worker with `multiprocessing` under a name that
shows up in `ps` (the worker sets its process title first thing). The main process runs the API
server; its children are the scheduler, the detokenizer and one tokenizer per `--num-tokenizer`.
"""),
code(r'''
ps = subprocess.run(["ps", "-eo", "ppid,args"], capture_output=True, text=True).stdout.splitlines()
children = [line.split(None, 1)[1] for line in ps[1:] if line.split()[0] == str(server.pid)]
print(sorted(name for name in children if name.startswith("minisgl")))
'''),
md(r"""
## 3. Send a streaming request

The same request as `curl -N http://127.0.0.1:1919/v1/chat/completions -d '{..., "stream": true}'`.
The answer comes back as Server-Sent Events: one `data: {json}` line per piece of text, and a last
line `data: [DONE]`. Greedy decoding keeps the text the same on every run. (We print the text
deltas, not the whole JSON, which carries an id and a timestamp that change every time.)
"""),
code(r'''
body = {"model": "smollm2-135m", "messages": [{"role": "user", "content": "What is KV Cache?"}],
        "max_tokens": 24, "temperature": 0, "stream": True}
deltas, last_line = [], None
with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=120) as r:
    for line in r.iter_lines():
        if not line.startswith("data: "):
            continue
        last_line = line
        if line != "data: [DONE]":
            delta = json.loads(line[6:])["choices"][0]["delta"]
            if delta.get("content"):
                deltas.append(delta["content"])
print(len(deltas), "chunks:", deltas)
print("last line:", last_line)
'''),
md(r"""
Each chunk is one `UserReply.incremental_output` from the detokenizer, usually one token's worth
of text. Now stop the server: SIGTERM makes the main process send `ExitMsg` to every worker and
wait for them to exit.
"""),
code(r'''
server.terminate()
print("server exit code:", server.wait(timeout=60))
log.close()
os.remove("server.log")
'''),
md(r"""
## 4. Follow the uid inside

The multi-process server does not let us stop between two steps. The in-process runtime,
`LocalServer`, runs the very same worker code (the `TokenizeWorker` of `tokenizer/server.py`,
the `Scheduler` and its `Engine`) connected by in-memory queues, and every component records what
it does to each uid in a trace (`minisgl_edu/trace.py`).
"""),
code(r'''
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer
from minisgl_edu.trace import summarize

srv = LocalServer("smollm2-135m", device="cpu")
uid = srv.submit([{"role": "user", "content": "What is KV Cache?"}], SamplingParams(max_tokens=24))
print("uid:", uid, "| queues:", srv.snapshot().queues)
'''),
md(r"""
`submit` did what the HTTP handler does: a new uid and a `TokenizeMsg` on the tokenizer's queue.
Nothing else has run yet. One `step()` runs each component once: the tokenizer turns the
`TokenizeMsg` into a `UserMsg`, the scheduler receives it, schedules a prefill batch and runs the
engine, the detokenizer turns the first token into text, and the frontend's `listen` routes the
`UserReply` to our uid.
"""),
code(r'''
snap = srv.step()
print("batch:", snap.batch.phase, "uids", snap.batch.uids, "tokens", snap.batch.num_tokens)
print("first token:", snap.batch.next_tokens, "-> text so far:", repr(srv.result(uid).text))
srv.run_until_idle()
res = srv.result(uid)
print(res.finish_reason, repr(res.text))
print("same text as the HTTP stream:", res.text == "".join(deltas))
'''),
md(r"""
The trace of that uid, in order (times left out; the per-token events are shown for the first
three tokens only):
"""),
code(r'''
print("\n".join(summarize(srv.trace(uid), max_tokens=3)))
'''),
md(r"""
And as a timeline, one lane per component. Most of the time is spent in the scheduler lane: the
prefill, then one decode step per token. (Times differ from run to run; the shape does not.)
"""),
code(r'''
# NBVAL_IGNORE_OUTPUT
import matplotlib.pyplot as plt
from minisgl_edu.trace import plot_timeline

fig = plot_timeline(srv.trace(uid), title=f"request {uid}")
plt.show()
'''),
md(r"""
The same picture as a widget, with a uid picker and a Refresh button (useful once several
requests are in flight; submit a few more with `srv.submit` and press Refresh):
"""),
code(r'''
# NBVAL_IGNORE_OUTPUT
from minisgl_edu.widgets import RequestTimeline

RequestTimeline(srv, uid)
'''),
md(r"""
## 5. The same hops in the source

| hop | message | file | function |
|---|---|---|---|
| HTTP → uid | — | `server/api_server.py` | `v1_chat_completions` → `generate` (`state.new_user()`) |
| API server → tokenizer | `TokenizeMsg` | `server/api_server.py` | `FrontendState.send_one` |
| tokenizer | chat template, ids | `tokenizer/server.py`, `tokenizer/template.py` | `TokenizeWorker.handle`, `TokenizeManager.tokenize`, `encode_prompt` |
| tokenizer → scheduler | `UserMsg` | `tokenizer/server.py` | `TokenizeWorker._tokenize` |
| scheduler loop | — | `scheduler/scheduler.py` | `normal_loop` → `step` → `_receive`, `_schedule_next_batch`, `_forward`, `_process_results` |
| engine | — | `engine/engine.py`, `engine/sampler.py` | `Engine.forward_batch`, `Sampler.sample` |
| scheduler → detokenizer | `DetokenizeMsg` | `scheduler/scheduler.py` | `_process_results` (`self.io.send`) |
| detokenizer | text | `tokenizer/server.py`, `tokenizer/detokenizer.py` | `DetokenizeManager.detokenize`, `IncrementalDetokenizer.add` |
| detokenizer → API server | `UserReply` | `server/api_server.py` | `FrontendState.listen` (by uid), `stream_chunks` → `data: [DONE]` |
| cancel | `AbortMsg` → `AbortBackendMsg` | `server/api_server.py`, `scheduler/scheduler.py` | `abort_user`, `Scheduler.abort` |

In SGLang the same roles are in `python/sglang/srt/`: `entrypoints/http_server.py` and
`managers/tokenizer_manager.py` (frontend and tokenizer), `managers/scheduler.py`
(`event_loop_normal`, `event_loop_overlap`), `managers/tp_worker.py` and
`model_executor/model_runner.py` (engine), `managers/detokenizer_manager.py`.

The cell below checks that those functions exist where the table says (so the table stays true).
"""),
code(r'''
import inspect
from pathlib import Path
import minisgl_edu
from minisgl_edu.server import api_server
from minisgl_edu.tokenizer.server import TokenizeWorker, TokenizeManager, DetokenizeManager
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.engine import Engine

ROOT = Path(minisgl_edu.__file__).parent.parent
for fn in [api_server.FrontendState.send_one, api_server.FrontendState.listen, TokenizeWorker.handle,
           TokenizeManager.tokenize, TokenizeWorker._tokenize, Scheduler.normal_loop, Scheduler._schedule_next_batch,
           Scheduler._forward, Engine.forward_batch, Scheduler._process_results, DetokenizeManager.detokenize,
           Scheduler.abort]:
    print(f"{str(Path(inspect.getsourcefile(inspect.unwrap(fn))).relative_to(ROOT)):<36} {fn.__qualname__}")
'''),
md(r"""
## Summary

The API server gives the request a uid and sends a `TokenizeMsg`; the tokenizer sends the token
ids on as a `UserMsg`; the scheduler queues it, batches it, calls the engine once per step, and
sends a `DetokenizeMsg` per new token; the detokenizer sends text as `UserReply`s; `listen` finds
the waiting HTTP response by uid and streams it, ending with `data: [DONE]`.

## Exercises

1. In `server/api_server.py`, find where the uid is created, where the `TokenizeMsg` is sent and
   where `UserReply`s are received. How does a reply find its HTTP response?
2. `_schedule_next_batch` and `_forward`: which one decides *which* requests run, and which one
   calls the engine? Check your answer against the `scheduled` events in the trace above.
3. Start the server again and stop a streaming client half-way (close the `httpx.stream` early).
   Which messages follow? Then do `exercises/02_abort.ipynb`, where you write the cleanup.
4. Find where a request is found to be finished (EOS or `max_tokens`) and where that becomes
   `data: [DONE]`. `exercises/01_finish.ipynb` asks you to write that check.
"""),
]
