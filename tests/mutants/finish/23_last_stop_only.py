"""Checks the stop strings in a loop that sets its flag anew on every pass (`found = s in tail`), so
only the last stop string of the list decides: a stop string earlier in the list is seen, then
forgotten when a later one is not in the text. Any stop string that completes ends the request,
whatever its place in the list; this answer lets the request run on past it. Differs e.g. for
stop=['two three four five six seven', '!'] and the output 'one two three four five six seven':
the reference answers "stop", this answer None."""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.core import Req

MUST_FAIL = {"the longest stop string sets the window"}
MUST_SAY = "whatever the strings after it say"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a later one that is not there must not undo an earlier match"


def check_finish(req: Req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        # a stop string of b bytes spans at most b tokens, + the token it starts in and a margin
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        found = False
        for s in sp.stop:
            found = s in tail
        if found:
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
