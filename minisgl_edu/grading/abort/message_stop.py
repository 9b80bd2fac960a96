"""The `stop` field of the abort message, shared by exercise 2 and its stretch.

Where this sits: checks.py's `check_message` (the hand-written cases) calls `check_stop` through
message_fields.py's `check_fields`; scenes.py shows `NONE_STOP_HINT` when a generated scene's abort
message differs from the reference's only by a stop field of None. Like every message of a request,
the abort message repeats the request's stop strings as a list, `[]` when there are none: the
detokenizer iterates it (`for s in stop`), so None is not "no stop strings" there but a TypeError.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

NONE_STOP_HINT = (
    "the message's stop field is a list, [] when the request has no stop strings, never None: the "
    "detokenizer iterates it. Send list(req.sampling_params.stop) as it is"
)


def check_stop(last, stop: Optional[list[str]]) -> None:
    """`last`: the request's finished message; `stop`: the stop strings it must carry (None: the case's
    request has none, so only the type is checked)."""
    if last.stop is None:
        raise Mistake(
            "the abort message carries stop=None: the detokenizer iterates the field (for s in stop) and "
            "raises TypeError. A request without stop strings sends an empty list, []",
            NONE_STOP_HINT,
        )
    if stop is not None and list(last.stop) != stop:
        raise Mistake(
            f"the abort message carries stop={list(last.stop)!r}, but the request's stop strings are "
            f"{stop!r}: like every message of the request, it repeats them",
            "send the request's own stop strings in the abort message: "
            "DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop)), not an empty list",
        )
