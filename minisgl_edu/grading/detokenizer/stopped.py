"""Exercise 3: once a stop string is found, the answer is complete. An answer with no "stopped"
state cuts its decoded text before the stop string and then carries on: the next tokens' text (or
what finish() flushes) is decoded after the cut and shown, although the scheduler has ended the
request on that token and the stop string stands between that text and the answer.

`went_on_after_the_stop` reads that from the pieces alone: by the token that completes the first
stop string the answer had returned the whole expected text, and later add() calls or finish()
returned more, text that is no stop string and no repeat of what was shown (those are other
mistakes, with their own hints). The hand cases and the generated phase share it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, repeated_at_finish

STOPPED = (
    "once a stop string is found the answer is complete: remember that it stopped (self.stopped = True) and "
    "return '' from every later add() and from finish(), whatever text later tokens bring"
)


def went_on_after_the_stop(pieces: list[str], ids: list[int], stop: list[str], expected: str) -> int:
    """The number of the token (from 1) that completed the first stop string, where the pieces up to
    it join to `expected` and later pieces still return text after the cut; else 0."""
    first = next((n for n in range(1, len(ids) + 1) if any(s and s in _full(ids[:n]) for s in stop)), 0)
    if not first or "".join(pieces[:first]) != expected:
        return 0
    after = "".join(pieces[first:])
    if not after or any(s and s in after for s in stop) or repeated_at_finish(pieces, expected):
        return 0
    return first


def check_stopped(pieces: list[str], ids: list[int], stop: list[str], expected: str) -> None:
    """Raise the STOPPED mistake when `went_on_after_the_stop` finds text returned after the stop."""
    n = went_on_after_the_stop(pieces, ids, stop, expected)
    if n:
        after = "".join(pieces[n:])
        where = "by finish()" if after == pieces[-1] else "by later add() calls" + (" and finish()" * bool(pieces[-1]))
        raise Mistake(
            f"stop={stop!r}: token {n} ({_full(ids[n - 1 : n])!r}) completed a stop string and your add() had "
            f"returned {expected!r}, the whole answer, cut before it; then {after!r} was returned {where}, text "
            f"decoded after the cut (your pieces: {pieces!r}). The request ends on the stop string: nothing after "
            "it is ever shown",
            STOPPED,
        )
