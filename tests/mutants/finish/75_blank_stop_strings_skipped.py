"""Guards the search against empty stop strings ("'' is in every text") with `if s.strip()`, which
also skips every stop string made only of whitespace: '\\n\\n' (the most common stop string of all),
' ' or '\\t' never end the request. Only '' would need skipping (SamplingParams drops it already); a
whitespace stop string is searched as given."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"stop string inside a token"}
MUST_SAY = "the empty ones dropped, []"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keep the ones made of whitespace only"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    """Return "stop", "length" or None for `req`, whose newest token is req.output_ids[-1]."""
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop if s.strip()):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
