"""Remembers, in a module-level set, the uids of the requests that already reached min_tokens, to
skip the count afterwards. The check must be a function of the request and its arguments alone:
a request that comes later under a uid seen before (another scheduler, another run, the next test)
gets no hold-back at all, and its EOS finishes it below the minimum. Differs e.g. for an EOS as
the 4th output token with min_tokens=5, after a request of the same uid reached its minimum: the
reference answers None, this answer "stop"."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: the min_tokens-th token counts"}
MUST_SAY = "remembers something from earlier calls"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "state kept between calls outside the request"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


_reached: set[int] = set()


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    n = len(req.output_ids)
    if req.uid not in _reached and n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    _reached.add(req.uid)
    return check_finish(req, eos_ids, decode)
