"""The `finished` and `finish_reason` fields of the abort message, shared by exercise 2 and its stretch.

Where this sits: checks.py's `check_message` (the hand-written cases) calls `check_flags` before it
checks finished and finish_reason one by one; scene_messages.py asks `swapped` when a generated
scene's abort message differs from the reference's. DetokenizeMsg's fields are, in order,
(uid, next_token, finished, finish_reason, stop). Given positionally as "uid, token, reason,
finished", the message carries finished='abort' (truthy, so it still ends the request) and
finish_reason=True: the client is told its request ended for reason `true`. Each field looked at
alone only says "finish_reason is True, expected 'abort'", which reads like the reason taken from
an unmarked request; the pair tells the swap, and the hint shows the order.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.core import Mistake

SWAPPED_HINT = (
    "finished and finish_reason are swapped: DetokenizeMsg's fields are (uid, next_token, finished, "
    "finish_reason, stop), so finished is True and finish_reason is 'abort'. Send "
    "DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop)), or name the fields "
    "(finished=True, finish_reason='abort')"
)


def swapped(finished: Any, finish_reason: Any) -> bool:
    """The message's finished holds the reason and its finish_reason the flag."""
    return isinstance(finished, str) and isinstance(finish_reason, bool)


def check_flags(last) -> None:
    """`last`: the request's finished message. finished is True and finish_reason 'abort', each in its place."""
    if swapped(last.finished, last.finish_reason):
        raise Mistake(
            f"the abort message carries finished={last.finished!r} and finish_reason={last.finish_reason!r}: "
            "the two are swapped, so the API server tells the client its request ended for reason "
            f"{last.finish_reason!r} instead of 'abort'",
            SWAPPED_HINT,
        )
