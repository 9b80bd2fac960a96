"""Exercise 3's stretch, flag set: each stop string's end is its position plus ITS OWN length. An
answer that first keeps the positions of the stop strings found (dropping find's -1s) and then pairs
them with the stop list by place (`enumerate(found)`, `self.stop[j]`) adds the wrong length as soon
as a stop string listed earlier is absent: 'one two three four' with stop ['zz', 'three'] gives
'one two th', the position of 'three' plus len('zz').

Other mistakes also cut the answer in the wrong place, so `_judge` in include_stop.py names this one
only when the answer's pieces are wrong AND the answer does the same on a small input of its own
(`pairs_ends_by_place`): an absent stop string listed before the one in the text cuts at that one's
position plus the absent one's length, for two lengths, while the same stop strings the other way
round cut right after it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

ENDS_PAIRED = (
    "each stop string's end is the position where THAT stop string was found plus its own length: keep "
    "each position with its stop string (pairs (i, s)), not a list of the found positions matched to "
    "the stop list by place, which shifts once a stop string listed earlier is absent"
)
PROBE_TEXT, PRESENT, ABSENT = "one two three four", "three", ("zz", "wxyz")


def _joined(cls, stop: list[str]) -> str | None:
    pieces = probe_pieces(lambda: cls(tokenizer(), stop, True), tokenizer().encode(PROBE_TEXT))
    return None if pieces is None else "".join(pieces)


def _paired_cut(absent: str) -> str:
    """The cut of an answer that pairs the position of PRESENT with the length of `absent`."""
    return PROBE_TEXT[: PROBE_TEXT.find(PRESENT) + len(absent)]


def pairs_ends_by_place(cls) -> bool:
    """On PROBE_TEXT, each stop list [absent, PRESENT] cuts at PRESENT's position plus len(absent), and
    [PRESENT, absent] cuts right after PRESENT (False when the answer fails there: a probe only confirms)."""
    right = PROBE_TEXT[: PROBE_TEXT.find(PRESENT) + len(PRESENT)]
    return all(_joined(cls, [a, PRESENT]) == _paired_cut(a) and _joined(cls, [PRESENT, a]) == right for a in ABSENT)


def check_paired_ends(pieces: list[str], expected: str, where: str, cls) -> None:
    """Raise when the pieces do not join to `expected` and the probe confirms the answer pairs the found
    positions with the stop list by place."""
    joined = "".join(pieces)
    if joined == expected or cls is None or not pairs_ends_by_place(cls):
        return
    a = ABSENT[0]
    raise Mistake(
        f"your pieces join to {joined!r}, expected {expected!r} {where}. On {PROBE_TEXT!r}, with stop "
        f"[{a!r}, {PRESENT!r}] your pieces join to {_paired_cut(a)!r}: the position of {PRESENT!r} plus "
        f"len({a!r}), the length of the stop string listed first, which is not in the text (with "
        f"[{PRESENT!r}, {a!r}] the cut is right). Your ends pair the positions found with the stop strings "
        "by their place in the list",
        ENDS_PAIRED,
    )
