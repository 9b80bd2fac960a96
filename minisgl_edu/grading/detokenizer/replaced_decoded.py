"""Exercise 3, base part: the text a token completes is appended to `decoded`
(`self.decoded += now[len(before):]`). An answer that assigns it instead (`self.decoded = ...`)
keeps only the newest token's text, while `sent` still counts characters of the whole text: from
the second token on the unsent text is read at the wrong place, so pieces come out empty or cut
(' one two three four' gives ' one', '', 'ee', '').

Other mistakes also hold text back or lose it, so `_objects_apart` in base.py (asked by every
failed hand case) names this one only when the answer returns, on a small input of its own with
no stop strings, exactly what a `decoded` replaced by each token's text gives (`check_decoded_kept`).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, probe_pieces
from minisgl_edu.grading.harness import tokenizer

REPLACED = (
    "append the text each token completes to decoded (self.decoded += ...), do not replace decoded with it: "
    "decoded holds all the text so far, and sent counts characters of all of it"
)
PROBE_TEXT = " one two three four"


def _pieces_of_a_replaced_decoded(ids: list[int]) -> list[str]:
    """What add() and finish() return when `decoded` is only the newest token's text and the piece is
    decoded[sent:], sent then set to len(decoded) (no stop strings, every token a whole character)."""
    pieces, sent = [], 0
    for k in range(len(ids)):
        new = _full(ids[: k + 1])[len(_full(ids[:k])) :]
        pieces.append(new[sent:])
        sent = len(new)
    return pieces + [new[sent:]]


def check_decoded_kept(cls) -> None:
    """Raise when the answer's pieces on PROBE_TEXT with no stop strings are those of a `decoded`
    replaced by each token's text (and not the right ones)."""
    ids = tokenizer().encode(PROBE_TEXT)
    got = probe_pieces(lambda: cls(tokenizer(), []), ids)
    wrong = _pieces_of_a_replaced_decoded(ids)
    if got is None or got != wrong or "".join(got) == PROBE_TEXT:
        return
    raise Mistake(
        f"on {PROBE_TEXT!r} with no stop strings your add() and finish() return {got!r}: after the first "
        f"token each piece is read from the newest token's text alone, at the place where all the text "
        "returned so far ends. Your decoded holds only the text of the newest token: it was replaced, not "
        "extended",
        REPLACED,
    )
