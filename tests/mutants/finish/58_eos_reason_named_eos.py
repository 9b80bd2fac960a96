"""Returns "eos" when the newest token is an end id, and "stop" only for stop strings, as some
servers (TGI's "eos_token") name the two apart. The contract, and the OpenAI finish_reason built
from it, have one reason for both: "stop"; a client that tests finish_reason == "stop" never sees it."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"EOS ids finish with 'stop'"}
MUST_SAY = "returned 'eos', expected 'stop'"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "ends the request with the reason 'stop'"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "eos"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
