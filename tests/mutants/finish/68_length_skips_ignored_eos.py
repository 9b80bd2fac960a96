"""Counts only the output tokens that are not end ids toward the length limit when ignore_eos is set ("an ignored
EOS decodes to no text, so it is not part of the answer's length"). The contract says "length" when
len(req.output_ids) reached req.max_new_tokens: every token, an ignored EOS included, uses a slot of the
context, and benchmarks set ignore_eos precisely to get a fixed token count, so such a request runs past its
limit."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "ignore_eos still ends at max_new_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the length limit holds whatever ignore_eos says"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    n = len(req.output_ids)
    if sp.ignore_eos:
        n = sum(1 for t in req.output_ids if t not in eos_ids)
    if n >= req.max_new_tokens:
        return "length"
    return None
