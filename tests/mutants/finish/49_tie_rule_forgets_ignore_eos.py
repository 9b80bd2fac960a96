"""Writes the tie rule ("the last allowed token is an EOS: the answer is 'stop'") as its own test on the length
branch, `return "stop" if last in eos_ids else "length"`, and forgets that ignore_eos switches the EOS test
off there too. A request with ignore_eos whose last allowed token happens to be an EOS id ran to its length
limit (the EOS did not finish it), so it must end with "length", not "stop". Differs for ignore_eos, 2 of max
2 tokens, the last an EOS: the reference answers "length", this answer "stop"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "its 'stop wins the tie' test forgets ignore_eos"
CAUGHT_BY = {"hand"}
HINT_SAYS = "'stop' wins the tie only for an EOS that counts"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    last = req.output_ids[-1]
    if not sp.ignore_eos and last in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        # both hold at once: the model finished its answer, it was not cut off
        return "stop" if last in eos_ids else "length"
    return None
