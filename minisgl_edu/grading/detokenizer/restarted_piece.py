"""Exercise 3's stretch, flag set: the piece that completes a stop string starts where the text
returned so far ends. An answer that starts it where the stop string begins (`decoded[begin:end]`,
"so the client gets the stop string whole") returns the part of the stop string it had already
returned a second time: with stop 'two thr', 'one', ' two' and then 'two thr'.

Other mistakes also give text that is not how the answer begins, so `_not_how_it_begins` in
include_stop.py names this one only when the piece restarts at the stop string in the scene AND
the answer does the same on a small input of its own (`restarts_at_the_stop`): `_judge` asks
`restarted_at_the_stop` first for a piece that is not how the answer begins.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

RESTARTS = (
    "the piece that completes the stop string starts where the text already returned ends, decoded[sent:end], "
    "not where the stop string begins: the part of it you returned already is not sent again"
)
PROBE_TEXT, PROBE_STOP = "one two three", "two thr"


def piece_restarts_at(before: str, piece: str, expected: str, begin: int) -> bool:
    """`piece`, returned after `before`, begins at `begin` (where the stop string begins, inside `before`)
    and not where `before` ends: without the part it repeats, the two are how `expected` begins."""
    again = len(before) - begin
    return 0 <= begin < len(before) and piece.startswith(before[begin:]) and expected.startswith(before + piece[again:])


def restarts_at_the_stop(cls) -> str:
    """The text the answer returns a second time on PROBE_TEXT with PROBE_STOP kept, when the piece
    that completes the stop string starts where it begins; '' when it does not (or fails there:
    a probe only confirms a mistake, the case's checks say what else is wrong)."""
    pieces = probe_pieces(lambda: cls(tokenizer(), [PROBE_STOP], True), tokenizer().encode(PROBE_TEXT))
    if pieces is None:
        return ""
    begin, expected = PROBE_TEXT.find(PROBE_STOP), PROBE_TEXT[: PROBE_TEXT.find(PROBE_STOP) + len(PROBE_STOP)]
    shown = ""
    for piece in pieces:
        if piece_restarts_at(shown, piece, expected, begin):
            return shown[begin:]
        shown += piece
    return ""


def restarted_at_the_stop(
    n: int, shown: str, before: str, expected: str, full: str, winner: str, where: str, cls
) -> Mistake | None:
    """The mistake, when the piece of token `n` (`shown` less `before`, the text of the add() calls
    before it) restarts where `winner` begins and the probe confirms the answer does that; else None."""
    begin = full.find(winner) if winner else -1
    again = piece_restarts_at(before, shown[len(before) :], expected, begin) and restarts_at_the_stop(cls)
    if not again:
        return None
    return Mistake(
        f"after token {n} your add() had returned {shown!r} {where}: its last piece starts where {winner!r} "
        f"begins, so {before[begin:]!r}, returned already, came again (on {PROBE_TEXT!r} with stop "
        f"[{PROBE_STOP!r}] your add() returns {again!r} twice too)",
        RESTARTS,
    )
