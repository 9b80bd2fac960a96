"""Exercise 3's stretch, flag set: after each piece, `sent` moves to where the piece ends, so the
next piece starts after it. An answer that returns `decoded[sent:end]` but never moves `sent` on
returns all the text from the start again with every add(): 'one', 'one two', 'one two three'.

Other mistakes also give text that is not how the answer begins, so `_judge` in include_stop.py
names this one only when the piece repeats all the text returned before it AND the answer does
the same on a small input of its own with no stop string in it (`sent_never_moves`).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

SENT_UNMOVED = (
    "after returning decoded[sent:end], move sent to end (self.sent = end): the next piece starts where "
    "this one ended, so no text is returned twice"
)
PROBE_TEXT, PROBE_STOP = "one two three", "xyz"


def sent_never_moves(cls) -> bool:
    """On PROBE_TEXT with PROBE_STOP (absent) kept, at least two add() pieces are non-empty and each
    one starts at the text's first character and reaches further than the one before: the answer
    returns the text from the start each time (False when it fails there: a probe only confirms)."""
    pieces = probe_pieces(lambda: cls(tokenizer(), [PROBE_STOP], True), tokenizer().encode(PROBE_TEXT))
    if pieces is None:
        return False
    grown = [p for p in pieces[:-1] if p]
    return len(grown) >= 2 and all(
        PROBE_TEXT.startswith(b) and b.startswith(a) and len(b) > len(a) for a, b in zip(grown, grown[1:])
    )


def sent_left_at_the_start(n: int, before: str, piece: str, where: str, cls) -> Mistake | None:
    """The mistake, when the piece of token `n` repeats all of `before` (the text of the add() calls
    before it) and the probe confirms the answer never moves `sent`; else None."""
    if not (before and piece.startswith(before) and cls is not None and sent_never_moves(cls)):
        return None
    return Mistake(
        f"after token {n} your add() returned {piece!r} {where}, which starts with {before!r}, all the text "
        f"returned before it: that text came again (on {PROBE_TEXT!r} with stop [{PROBE_STOP!r}] kept, every "
        "add() returns the text from its first character again). The piece was taken from sent, but sent "
        "never moved on",
        SENT_UNMOVED,
    )
