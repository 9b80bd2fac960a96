"""Exercise 3: the text right before a stop string is text like any other, its last space included.

'one two three' with stop 'three' is cut right before the stop string: the answer is 'one two ', the
space before 'three' kept. An answer that strips the whitespace off the text before the stop string
("the space goes with the stop word") no longer joins to the decode cut right before it.

A piece that joins short has other causes too, so this is confirmed by the answer's own pieces on a
small input of its own (`check_space_before_stop_kept`): they join to exactly the text before the stop
string with its trailing whitespace removed.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

SPACE_KEPT = (
    "cut right before the stop string and strip nothing: the space before it is text of the answer, "
    "'one two ' for 'one two three' with stop 'three'"
)
TEXT, STOP = "one two, three", "three"


def check_space_before_stop_kept(cls) -> None:
    """Raise SPACE_KEPT when the answer's pieces on TEXT with STOP join to the text before the stop
    string less its trailing whitespace."""
    ids = tokenizer().encode(TEXT)
    before = TEXT[: TEXT.find(STOP)]
    pieces = probe_pieces(lambda: cls(tokenizer(), [STOP]), ids)
    if pieces is None:
        return  # (the case's own checks say what is wrong)
    joined = "".join(pieces)
    if joined != before and joined == before.rstrip():
        raise Mistake(
            f"on {TEXT!r} with stop [{STOP!r}] your pieces join to {joined!r}, expected {before!r}: the space "
            "before the stop string was stripped. The answer is the decode cut right before the stop string, "
            "whitespace included",
            SPACE_KEPT,
        )
