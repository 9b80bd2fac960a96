"""When the newest token is an EOS id and ignore_eos is set, returns None at once ("an ignored EOS:
keep going"), skipping the stop-string and length tests that follow. ignore_eos only switches the
EOS test off; the other rules still apply to that token. Differs e.g. with ignore_eos=True,
max_new_tokens=3 and output [5, 6, EOS]: the reference answers "length" (the limit is reached),
this answer None, so the request runs past its max_tokens (and past the end of its context)."""

from __future__ import annotations

from typing import Callable, Optional

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "ignore_eos still ends at max_new_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the length limit holds whatever ignore_eos says"


def check_finish(req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if req.output_ids[-1] in eos_ids:
        if sp.ignore_eos:
            return None  # an ignored EOS: keep going
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
