"""Below min_tokens it calls its own check_finish with `eos_ids=None` and `decode=None`, "no EOS ids and no
decoder while they are held back". None is not an empty set: check_finish tests `output_ids[-1] in eos_ids`
first, which raises TypeError for every request that does not set ignore_eos, instead of returning None (or
"length" at the cap)."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stretch: EOS waits for min_tokens"}
MUST_SAY = "argument of type 'NoneType' is not iterable"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "'NoneType' is not iterable"


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
    if len(req.output_ids) < min_tokens:
        return check_finish(req, None, None)
    return check_finish(req, eos_ids, decode)
