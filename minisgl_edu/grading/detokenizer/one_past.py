"""Exercise 3's stretch: with the flag set, the cut is at i + len(s), one past the stop string's
last character, which is already the exclusive end of the slice.

An answer that cuts at i + len(s) + 1 ("one past the last character") shows one character after the
stop string. Where the stop string ends where a token ends the slice stops at the end of the decoded
text and the answer looks right; where the completing token goes on past it (' three' completing
'wo thr'), exactly one character of that text reaches the client. This is the twin of a cut one
character short (`cut_one_short`, stop_piece.py).

`cut_one_past` names it where the text shown is the answer plus exactly one character, and a probe
agrees: on two ASCII plays (one byte a character, so a cut counted in bytes is right there, and
byte_end.py's probe does not fire) the answer's pieces join to the answer plus its next character.
include_stop.py asks `cut_too_far`, which tries this before the cut counted in bytes: on byte_end.py's
probe ('ç', 2 bytes, 1 character) a cut one character past the stop string is a cut in bytes too.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.byte_end import cut_in_bytes
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.harness import tokenizer

ONE_PAST = (
    "the text shows exactly one character past the stop string: i + len(s) is already the exclusive end (one past "
    "its last character), so cut at i + len(s), not i + len(s) + 1"
)
# (text, stop list, the answer with one character more): the completing token goes on past the stop string
PAST_PLAYS = [("one two three four", ["wo thr"], "one two thre"), ("Hello there", ["Hel"], "Hell")]


def _cuts_one_past(cls) -> bool:
    """On each of PAST_PLAYS the answer's pieces join to the answer plus its next character (False
    when the answer fails there: a probe only confirms)."""
    for text, stop, past in PAST_PLAYS:
        try:
            if "".join(_stream(cls, tokenizer().encode(text), stop, True)) != past:
                return False
        except Exception:
            return False
    return True


def cut_one_past(cls, shown: str, expected: str, said: str):
    """A Mistake after `said` when `shown` is `expected` plus one character and the probe agrees; else None."""
    if cls is None or len(shown) != len(expected) + 1 or not shown.startswith(expected) or not _cuts_one_past(cls):
        return None
    text, stop, past = PAST_PLAYS[0]
    return Mistake(
        f"{said}: exactly one character past the stop string. On {text!r} with stop={stop} your text is {past!r} "
        f"too, one character past '{stop[0]}': your cut is one past the exclusive end of the stop string",
        ONE_PAST,
    )


def cut_too_far(cls, shown: str, pieces: list[str], ids: list[int], stop: list[str], expected: str, winner: str, said):
    """Where `shown` goes on past the answer `expected`: a Mistake naming a cut one past the stop string,
    else one counted in bytes (byte_end.py), else None."""
    if not shown.startswith(expected):
        return None
    return cut_one_past(cls, shown, expected, said) or cut_in_bytes(pieces, ids, stop, expected, winner, said, cls)
