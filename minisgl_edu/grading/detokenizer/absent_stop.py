"""Exercise 3's stretch, flag set: a stop string's end is `i + len(s)` only where str.find found it
(`i >= 0`). An answer that adds len(s) to find's -1 reads a stop string that is not in the text as
one that ends at len(s) - 1: the first add() cuts there and the stream stops, although no stop
string ever came ('one two three four' with stop ['xyz'] gives 'on').

Other mistakes also cut the answer short, so `_judge` in include_stop.py names this one only when
the answer's pieces are cut short AND the answer does the same on a small input of its own, with
two absent stop strings of different lengths (`cuts_at_an_absent_stop`).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

ABSENT_AS_AN_END = (
    "str.find returns -1 when the stop string is not in the text: test i >= 0 before taking i + len(s) "
    "as the stop string's end"
)
PROBE_TEXT, PROBE_STOPS = "one two three four", ("xyz", "wxyz")  # both cut inside the first token, "one"


def cuts_at_an_absent_stop(cls) -> bool:
    """On PROBE_TEXT, each of PROBE_STOPS (neither is in it) kept alone cuts the pieces at len(s) - 1
    characters, where -1 + len(s) puts it (False when the answer fails there: a probe only confirms)."""
    ids = tokenizer().encode(PROBE_TEXT)
    for s in PROBE_STOPS:
        pieces = probe_pieces(lambda: cls(tokenizer(), [s], True), ids)
        if pieces is None or "".join(pieces) != PROBE_TEXT[: len(s) - 1]:
            return False
    return True


def check_absent_stop_read(pieces: list[str], expected: str, where: str, cls) -> None:
    """Raise when the pieces join to a start of `expected` cut short and the probe confirms the answer
    takes find's -1 for a position."""
    joined = "".join(pieces)
    if joined == expected or not expected.startswith(joined) or cls is None or not cuts_at_an_absent_stop(cls):
        return
    got = [PROBE_TEXT[: len(s) - 1] for s in PROBE_STOPS]  # what the probe just saw
    raise Mistake(
        f"your pieces join to {joined!r}, expected {expected!r} {where}: cut short. On {PROBE_TEXT!r}, with "
        f"stop [{PROBE_STOPS[0]!r}] your pieces join to {got[0]!r} and with [{PROBE_STOPS[1]!r}] to {got[1]!r}: "
        "neither stop string is in the text, and you cut at -1 + len(s), find's -1 read as a position",
        ABSENT_AS_AN_END,
    )
