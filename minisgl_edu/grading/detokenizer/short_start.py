"""Exercise 3: a stream whose first characters begin a stop string, then a long token.

The tail held back is at most the text not yet returned. An answer that tests every length k with
`s.startswith(decoded[-k:])` counts a start of k characters even when the text is shorter than k:
the slice is then the whole text, not a tail of k characters. After the token 'Th' with stop
'Three four' it holds back 9 characters of a 2-character text, so the cut len(decoded) - hold, and
`sent` with it, goes to -7; the next piece, decoded[-7:], is the last 7 characters of the text,
and what comes before them is lost.

`check_start_not_lost` plays 'Th answering' (tokens 'Th', ' answering') and names the mistake only
when the pieces join to exactly those last characters; base.py asks it in the false-starts case.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, check_joined_to, pieces_of
from minisgl_edu.grading.harness import tokenizer

HOLD_PAST_THE_TEXT = (
    "the held-back tail can never be longer than the text not yet returned: try k only up to "
    "len(decoded) - sent, since decoded[-k:] with k past the text's length is the whole text, not a tail of "
    "k characters"
)
TEXT, TOKENS, STOP = "Th answering", ["Th", " answering"], "Three four"


def check_start_not_lost(cls) -> None:
    """The pieces of TEXT with STOP join to all of TEXT (no stop string in it); when they join to its
    last len(STOP) - 1 - len('Th') characters, `sent` went below 0 after 'Th': that is named."""
    ids = tokenizer().encode(TEXT)
    assert [_full([t]) for t in ids] == TOKENS, f"setup: {TEXT!r} must be the tokens {TOKENS}"
    pieces = pieces_of(cls(tokenizer(), [STOP]), ids)
    joined, past = "".join(pieces), len(STOP) - 1 - len(TOKENS[0])
    if joined != TEXT and joined == TEXT[-past:]:
        raise Mistake(
            f"stop=[{STOP!r}] on {TEXT!r} (tokens {TOKENS}): your pieces {pieces!r} join to {joined!r}, the "
            f"last {past} characters only. After 'Th' you held back {len(STOP) - 1} characters of a text of "
            f"{len(TOKENS[0])}: decoded[-k:] is the whole text 'Th' for every k past its length, and 'Th' begins "
            f"{STOP!r}, so the cut went to -{past}, sent with it, and the next piece started {past} characters "
            "before the end of the text",
            HOLD_PAST_THE_TEXT,
        )
    check_joined_to(pieces, TEXT, f"stop=[{STOP!r}] on {TEXT!r}: the pieces")
