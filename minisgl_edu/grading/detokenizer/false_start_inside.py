"""Exercise 3: a stop string that begins inside a false start of itself.

With stop='no no yes' and the tokens of 'said no no no yes please', the first 'no no ' is a false
start (the third 'no' is no 'yes'), but the stop string begins again at its second 'no': 'no no yes'
follows. An answer that matches the stop string character by character, counting how many match so
far and restarting at 0 (or 1, when the character begins the stop string) on a mismatch, forgets
that 'no n' is already the start of the stop string, never sees it, and shows the text past it.

`check_start_inside_a_false_start` confirms it on a small input of its own: the same answer finds
'no no yes' in 'said no no yes please', where no false start comes before it. case_false_starts in
base.py plays the stream and asks it first.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, text_pieces
from minisgl_edu.grading.harness import tokenizer

TEXT, STOP, EXPECTED = "said no no no yes please", "no no yes", "said no "
PLAIN, PLAIN_EXPECTED = "said no no yes please", "said "  # the stop string with no false start before it

LOOK_BACK_AT_THE_MATCH = (
    "a stop string can begin inside a false start of itself ('no no yes' in 'no no no yes'): on a mismatch, "
    "do not restart the count at 0 or 1; look back at the characters already matched for the longest tail "
    "of them that still begins the stop string, or simply search all the text not yet returned with str.find"
)


def false_start_ids() -> list[int]:
    """The tokens of TEXT; the setup asserts its words are tokens of their own."""
    ids = tokenizer().encode(TEXT)
    words = [_full([t]) for t in ids]
    assert words == ["said", " no", " no", " no", " yes", " please"], f"setup: one token per word: {words}"
    return ids


def check_start_inside_a_false_start(cls, pieces: list[str]) -> None:
    """Raise a Mistake when `pieces` (the answer's on TEXT) show the stop string, and the probe on PLAIN
    shows the answer finds it where no false start comes before it."""
    joined = "".join(pieces)
    if STOP not in joined:
        return  # right, or another mistake that the case's checks name
    plain = text_pieces(cls, PLAIN, [STOP])
    if plain is None or "".join(plain) != PLAIN_EXPECTED:
        return  # it misses the stop string without a false start too: another mistake
    raise Mistake(
        f"stop={[STOP]!r}: on {TEXT!r} your pieces {pieces!r} join to {joined!r}, expected {EXPECTED!r}, yet on "
        f"{PLAIN!r} you cut at {STOP!r} as you should. In {TEXT!r} the first 'no no ' is a false start (the "
        f"third 'no' is no 'yes'), but {STOP!r} begins again at its second 'no'. Your search restarts after the "
        "mismatch without looking back at the characters it had already matched, so it never sees that one",
        LOOK_BACK_AT_THE_MATCH,
    )
