"""A diagnosis for exercise 1: a decode window grown one token at a time until its DECODED TEXT has as
many characters as the longest stop string, len(s). Characters of text are not tokens: a token can
carry several characters (' three' is 6), so the window stops growing before it reaches the start of
a stop string that ends inside the newest token; and a byte token of a character cut short decodes to
one '\\ufffd', so an emoji or CJK stop string is not covered either. The hand cases on a stop string
inside a token (base.py) and of CJK characters (windows.py) name it.

The probe runs the answer on 100 ' ok' tokens (3 characters each) with a stop string of 6 and one of
30 characters that the output never holds, and reads the widest call of decode: it is named only
when, both times, that window's text has at least len(s) characters and one token less would not
(2 and 10 tokens here; a window counted in bytes is 6 and 30 tokens plus a margin). A probe that
raises counts as "not this mistake".
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _req, noting_decode

WINDOW_OF_DECODED_TEXT = (
    "size the window in tokens by the stop string's bytes, not by the characters of the decoded text: your "
    "window grows until decode(...) has len(s) characters, but one token can carry several characters (' three' "
    "is 6), so the window stops before the start of a stop string that ends inside the newest token, and a byte "
    "token of a cut character decodes to a single '\\ufffd'. Decode max(len(s.encode()) for s in stop) tokens "
    "plus a margin, whatever text they decode to"
)


def _widest(fn: Any, stop: str) -> list[int]:
    """The ids of the answer's widest decode call on 100 ' ok' tokens with stop=[stop]."""
    calls: list[list[int]] = []
    fn(_req([PLAIN] * 100, max_new=500, stop=[stop]), set(EOS), noting_decode(calls))
    return max(calls, key=len, default=[])


def window_of_decoded_text(fn: Any) -> bool:
    """True when the answer's window is the fewest newest tokens whose text has len(s) characters."""
    try:
        for stop in ("~" * 6, "~" * 30):
            ids = _widest(fn, stop)
            if not (len(_decode(ids)) >= len(stop) > len(_decode(ids[1:]))):
                return False
        return True
    except Exception:
        return False
