"""Exercise 3: a stop string that begins at the very start of the text searched is a match.

str.find returns the position where the stop string begins: 0 when it begins at the first character
of the output (or of the slice of text not yet returned that an answer searches), and -1 only when
it is not there. An answer that reads 0 as "not found" (`i > 0`, `if i:`) misses exactly the stop
string that begins where its search begins, and shows it. An answer whose search stops one
character short of the end (str.find with an end of -1) misses 'one' here too, since it ends at the
last character: find_end.py names that first. An answer that cuts one character before the stop
string shows it here too, less its last character (decoded[0:-1]); one_early.py names that.

`check_stop_at_offset_zero` plays 'one two three' with stop=['one']: the first token is the whole
stop string, at character 0, so nothing is ever shown. An answer that shows it there is told so,
unless the probes of late_search.py show a search that starts one character late (it misses a stop
string at that very place too, and has its own hint).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.detokenizer.find_end import check_search_reaches_the_end
from minisgl_edu.grading.detokenizer.late_search import check_search_start
from minisgl_edu.grading.detokenizer.one_early import check_cut_one_early
from minisgl_edu.grading.harness import tokenizer

OFFSET_ZERO = (
    "a stop string at the very start of the text you search counts: str.find returns where it begins, 0 at the "
    "start of the text (or of the slice you search), and 0 is a match; only -1 means not found (test i >= 0, "
    "not i > 0 or `if i`)"
)
TEXT, STOP = "one two three", ["one"]


def check_stop_at_offset_zero(cls) -> list[str]:
    """Play TEXT with STOP, whose one stop string is the first token; raise the OFFSET_ZERO mistake
    when the pieces show it from character 0. Return the pieces for the caller's own checks."""
    ids = tokenizer().encode(TEXT)
    assert tokenizer().decode(ids[:1]) == STOP[0], "setup: the first token must be the whole stop string"
    pieces = pieces_of(cls(tokenizer(), list(STOP)), ids)
    joined = "".join(pieces)
    if joined and STOP[0].startswith(joined):  # a start of it shown: decoded[0:-1], a cut at 0 - 1?
        check_cut_one_early(cls)
    if joined.startswith(STOP[0]):
        check_search_reaches_the_end(cls)  # 'one' also ends at the last character decoded: missed for that?
        n = next(i for i, piece in enumerate(pieces) if piece)  # the first piece that shows text
        check_search_start(cls, n + 1, "".join(pieces[: n + 1]), STOP[0])
        raise Mistake(
            f"stop={STOP!r}: the first token {STOP[0]!r} is the whole stop string, at character 0 of the text, "
            f"where your search begins (nothing was returned yet), and your pieces {pieces!r} join to {joined!r}, "
            "expected '': the stop string at offset 0 was missed. str.find returns 0 there, and 0 is a match",
            OFFSET_ZERO,
        )
    return pieces
