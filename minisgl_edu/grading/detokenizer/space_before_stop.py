"""Exercise 3: the text right before a stop string is text like any other, its last space included.

'one two three' with stop 'three' is cut right before the stop string: the answer is 'one two ', the
space before 'three' kept. An answer that strips the whitespace off the text before the stop string
("the space goes with the stop word") no longer joins to the decode cut right before it.

A piece that joins short has other causes too, so this is confirmed by the answer's own pieces on
two small inputs of its own (`check_space_before_stop_kept`): on each they join to exactly the text
before the stop string with its trailing whitespace removed. On the second, the stop string follows a
word held back as a false start ('two ' of 'one two three' with stop ['two!', 'three']), so an answer
that loses all the text since its last piece, not just the space (a stop string's position found in
the unsent text and cut at as a position in all of it), fails this test; `check_cut_from_sent`
(cut_from_sent.py), asked first, names that. A cut one character before the stop string loses the
space here too, and any other character elsewhere: `check_cut_one_early` (one_early.py), asked before
both, names that.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.detokenizer.cut_from_sent import check_cut_from_sent
from minisgl_edu.grading.detokenizer.one_early import check_cut_one_early
from minisgl_edu.grading.harness import tokenizer

SPACE_KEPT = (
    "cut right before the stop string and strip nothing: the space before it is text of the answer, "
    "'one two ' for 'one two three' with stop 'three'"
)
TEXT, STOP = "one two, three", "three"
# (text, stop list): the space lost is the whole text since the last piece, then only its end
PROBES = [(TEXT, [STOP]), ("one two three", ["two!", "three"])]


def _stripped_before(cls, text: str, stop: list[str]) -> bool:
    """The answer's pieces on `text` join to the text before the first stop string less its trailing
    whitespace (not the text before it as it is)."""
    before = text[: min(text.find(s) for s in stop if s in text)]
    pieces = probe_pieces(lambda: cls(tokenizer(), list(stop)), tokenizer().encode(text))
    if pieces is None:
        return False  # (the case's own checks say what is wrong)
    joined = "".join(pieces)
    return joined != before and joined == before.rstrip()


def check_space_before_stop_kept(cls) -> None:
    """Raise ONE_EARLY, CUT_FROM_SENT or SPACE_KEPT when the answer's pieces show that mistake on the probes."""
    check_cut_one_early(cls)  # the space lost is just the character before the stop string, whatever it is
    check_cut_from_sent(cls)
    if not all(_stripped_before(cls, text, stop) for text, stop in PROBES):
        return
    before = TEXT[: TEXT.find(STOP)]
    raise Mistake(
        f"on {TEXT!r} with stop [{STOP!r}] your pieces join to {before.rstrip()!r}, expected {before!r}: the space "
        "before the stop string was stripped. The answer is the decode cut right before the stop string, "
        "whitespace included",
        SPACE_KEPT,
    )
