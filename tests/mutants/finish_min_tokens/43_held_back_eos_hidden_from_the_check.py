"""From the minimum on, hands check_finish a copy of the request whose output leaves out the EOS ids
that were held back before the minimum ("a real engine masks them, so they are not part of the
answer"); req.output_ids itself is untouched. But the length limit counts every output token, a
held-back EOS included: with k held-back EOS the request runs k tokens past req.max_new_tokens."""

from __future__ import annotations

import copy
from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: max_tokens still ends it"}
MUST_SAY = "its length test leaves out the held-back EOS"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not hide held-back EOS ids from the check"


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


def check_finish_min_tokens(
    req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    """check_finish, with EOS and stop strings held back until min_tokens output tokens exist."""
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    before = req.output_ids[: min_tokens - 1] if min_tokens > 0 else []
    if any(t in eos_ids for t in before):
        # the EOS ids held back before the minimum are not part of the answer: check it without them
        view = copy.copy(req)
        view.output_ids = [t for t in before if t not in eos_ids] + req.output_ids[len(before) :]
        return check_finish(view, eos_ids, decode)
    return check_finish(req, eos_ids, decode)
