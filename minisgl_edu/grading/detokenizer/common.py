"""What exercise 3's grader checks every piece with, shared by its hand-written cases and its
generated scenes: a piece is a str, the full decode it must join to, and the hints of the
contract's three rules (whole characters, hold back a possible stop string, search all the text
not yet returned).
"""

from __future__ import annotations

from minisgl_edu.grading.core import expect
from minisgl_edu.grading.harness import tokenizer

REPLACEMENT = "\ufffd"
WHOLE_CHARACTERS = "hold text back while the decoded window ends in '\\ufffd'"
SEARCH_ALL = "look for stop strings in all the text not yet returned (the held-back tail and the new text)"
HOLD_BACK = "hold back a tail that could begin a stop string"
EARLIEST_START = (
    "cut before the stop string that begins first in the text (the smallest position), even when another one "
    "ends before it"
)


def _full(ids: list[int]) -> str:
    return tokenizer().decode(ids, skip_special_tokens=True)


def _piece(got, what: str) -> str:
    expect(
        isinstance(got, str),
        f"{what} returned {got!r} ({type(got).__name__}); it must return a str ('' for nothing yet)",
        "add() and finish() return '' when there is nothing new to show, never None",
    )
    return got
