"""Exercise 3: a tail of ONE character can begin a stop string too.

An answer that tries the tail lengths `range(2, len(s))` ("so that one common letter does not stall
the stream") never holds back a single character: the '\\n' of '\\n\\n', the '.' of '. ', 北 of 北京
go out at once, and the next token completes the stop string whose start the client has seen.
`check_one_character_start` confirms it on 'one two' (tokens 'one', ' two'): the answer holds back
'wo', a 2-character start of 'wo!', but shows the 'o' that begins 'o!'. base.py and final_flush.py
ask it where a stop string, or the start of one, was shown.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, _piece
from minisgl_edu.grading.harness import tokenizer

ONE_CHARACTER_START = (
    "a single character can begin a stop string too (the '\\n' of '\\n\\n', 北 of 北京): hold back tails of "
    "every length from 1 to len(s) - 1, range(1, len(s)), not only those of two characters or more"
)


def _shown_after(cls, ids: list[int], stop: list[str]) -> str | None:
    """What the answer's add()s return on `ids`, or None when it raises there (left to the case)."""
    try:
        detok = cls(tokenizer(), stop)
        return "".join(_piece(detok.add(t), f"add({t})") for t in ids)
    except Exception:
        return None


def check_one_character_start(cls) -> None:
    """Raise a Mistake when the answer, after 'one two', holds back 'wo' for the stop string 'wo!'
    but shows all of 'one two' for 'o!', whose one-character start 'o' ends the text."""
    if cls is None:
        return
    ids = tokenizer().encode("one two")
    assert [_full([t]) for t in ids] == ["one", " two"], "setup: 'one two' must be two tokens"
    if _shown_after(cls, ids, ["wo!"]) == "one t" and _shown_after(cls, ids, ["o!"]) == "one two":
        raise Mistake(
            "with stop=['wo!'] your add() held 'wo' back after the token ' two', but with stop=['o!'] it returned "
            "'one two', although its last character 'o' is the start of 'o!' and '!' may follow. You hold back "
            "only starts of two characters or more, so a stop string's first character reaches the client "
            "before the token that completes it",
            ONE_CHARACTER_START,
        )
