"""Exercise 3: which tails the hold-back tries. A tail of the text not yet returned is held back
while it could begin a stop string; the contract tries every length from 1 to len(s) - 1 (at most
the unsent text). These probes tell two wrong answers apart from the rest, each by a pair of
streams that differ only in the stop string: one that tests only the longest tail, and one whose
lengths stop one short of len(s) - 1. `_check_never_partly_shown` (base.py) asks them when an
add() showed the start of a stop string.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, _piece
from minisgl_edu.grading.harness import tokenizer

EVERY_TAIL_LENGTH = (
    "try every length of the tail, from 1 to len(s) - 1 characters (at most the text not yet returned), not only "
    "the longest: a shorter end of the text may be the start of the stop string"
)


def _shown_after(cls, ids: list[int], stop: list[str]) -> str:
    detok = cls(tokenizer(), stop)
    return "".join(_piece(detok.add(t), f"add({t})") for t in ids)


def check_every_tail_length(cls) -> None:
    """An answer that tests one tail only, the longest (all the text not yet returned, or its last
    len(s) - 1 characters), holds back ' three' for the stop string ' three four' but shows ' three'
    for 'three four', whose start 'three' is a shorter end of that text."""
    ids = tokenizer().encode("one two three")
    assert [_full([t]) for t in ids] == ["one", " two", " three"], "setup: 'one two three' must be three tokens"
    shorter, whole = _shown_after(cls, ids, ["three four"]), _shown_after(cls, ids, [" three four"])
    if shorter == "one two three" and whole == "one two":
        raise Mistake(
            "with stop=['three four'] your add() had returned 'one two three' after the token ' three', yet its end "
            "'three' could begin the stop string; with stop=[' three four'] it held ' three' back. You test only the "
            "longest tail (all the text not yet returned, or its last len(s) - 1 characters): when that is not the "
            "start of a stop string, a shorter end of it may still be",
            EVERY_TAIL_LENGTH,
        )


LONGEST_START = (
    "a tail of len(s) - 1 characters can begin the stop string s (for a 2-character stop string, its first "
    "character): try every tail length from 1 to len(s) - 1, that length included, e.g. range(1, len(s))"
)


def check_longest_start_tried(cls) -> None:
    """An answer whose tail lengths stop one short of len(s) - 1 (`range(1, len(s) - 1)`) holds back
    'two' of 'one two' for the stop string 'two!!' (3 of its 5 characters) but shows it for 'two!'
    (3 of 4: the longest start a tail can be), and holds back nothing for a 2-character stop string."""
    ids = tokenizer().encode("one two")
    assert [_full([t]) for t in ids] == ["one", " two"], "setup: 'one two' must be two tokens"
    if _shown_after(cls, ids, ["two!!"]) == "one " and _shown_after(cls, ids, ["two!"]) == "one two":
        raise Mistake(
            "with stop=['two!!'] your add() held 'two' back after the token ' two', but with stop=['two!'] it "
            "returned 'one two', although 'two' is the first 3 of its 4 characters and '!' may follow. You never "
            "try a tail of len(s) - 1 characters, the longest that can begin s (so for a stop string of 2 "
            "characters you hold back nothing at all)",
            LONGEST_START,
        )
