"""The generated phase's hint for the messages an abort sends, shared by exercise 2 and its stretch.

Where this sits: scenes.py records, after each abort, the messages to the detokenizer as tuples
(uid, next_token, finished, finish_reason, stop) and, when they differ from the reference's, asks
`messages_hint` for the hint. One message for the right uid that still ends the request is told
apart by the field that differs (finished and finish_reason swapped, the reason, the token, the
stop strings); any other difference (no message, several, a message for a uid that is not live)
gets the contract's message itself.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.abort.checks import REASON_HINT
from minisgl_edu.grading.abort.message_flags import SWAPPED_HINT, swapped
from minisgl_edu.grading.abort.message_stop import NONE_STOP_HINT
from minisgl_edu.grading.abort.message_token import next_token_hint
from minisgl_edu.grading.explore import Difference


def messages_hint(scene: Any, diff: Difference) -> str:
    """The hint for the field "messages to the detokenizer" of an abort."""
    if not diff.expected:
        return "send nothing for a uid that is not live (never seen, finished, or aborted already)"
    got, want = diff.got, diff.expected
    if isinstance(got, list) and len(got) == len(want) == 1 and got[0][0] == want[0][0] and got[0][2]:
        if swapped(got[0][2], got[0][3]):
            return SWAPPED_HINT
        if got[0][3] != want[0][3]:
            return REASON_HINT
        if got[0][1] != want[0][1]:
            return next_token_hint(got[0][1])
    if isinstance(got, list) and [m[:4] for m in got] == [m[:4] for m in want]:
        if any(m[4] is None for m in got):
            return NONE_STOP_HINT
        return (
            "the message carries the request's stop strings, as every message of the request does: "
            "DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop))"
        )
    return (
        "tell the detokenizer once: DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop)) "
        "through scheduler.io.send([...])"
    )
