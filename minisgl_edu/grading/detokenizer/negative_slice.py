"""Exercise 3: the piece ends at len(decoded) - hold, which is all of the unsent text when hold is 0.

An answer that cuts the held-back tail off with a negative slice, `decoded[sent:-hold]` ("all but
the last hold characters"), gets an empty piece whenever nothing is held back: -0 is 0, so the
slice ends at 0. Text then comes out only on a token where some tail could begin a stop string
(hold > 0), and at finish(). Without stop strings that is only at finish(), as from an answer that
streams nothing at all, so the pieces of a case without stop strings cannot tell the two apart.

`check_negative_slice` plays two probes with a stop string whose start ends the text after one
token and not after the others: the answer's pieces must be exactly those of the package's
detokenizer with that slice (`negative_slice`), which releases text on that token alone.
`negative_slice_pieces` gives them for the generated scenes (scenes.py).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

NEGATIVE_SLICE = (
    "add() returned '' although nothing was held back (no stop string could begin): a slice that ends at -hold, "
    "decoded[sent:-hold], is empty when hold is 0 (-0 is 0); end the piece at len(decoded) - hold"
)
# (text, stop list): the text ends in a start of the stop string after one token only ('three', 'two')
PROBES = [("one two three two one", ["three four"]), ("one two three four", ["two!"])]


class negative_slice(reference):
    """The package's detokenizer with one mistake: add() cuts the piece at -hold, so with nothing
    held back it returns ''."""

    def _release(self, final: bool) -> str:
        if not final and not self.stopped and self._could_start_stop() == 0:
            if not any(s in self._decoded[self._released :] for s in self.stop):
                return ""  # (a stop string found is cut at its position, as before)
        return super()._release(final)


def negative_slice_pieces(ids: list[int], stop: list[str]) -> list[str]:
    """The pieces of `negative_slice` on `ids`: each add()'s, then finish()'s."""
    return pieces_of(negative_slice(tokenizer(), list(stop)), ids)


def check_negative_slice(cls) -> None:
    """Raise NEGATIVE_SLICE when, on every probe, the answer's pieces are those of `negative_slice`."""
    if cls is None:
        return
    for text, stop in PROBES:
        ids = tokenizer().encode(text)
        assert negative_slice_pieces(ids, stop) != pieces_of(reference(tokenizer(), stop), ids), (
            "setup: the probe must tell the slice apart"
        )
        if text_pieces(cls, text, stop) != negative_slice_pieces(ids, stop):
            return
    text, stop = PROBES[0]
    ids = tokenizer().encode(text)
    pieces = negative_slice_pieces(ids, stop)
    n = next(i for i, p in enumerate(pieces) if p)
    decoded = tokenizer().decode(ids[: n + 1], skip_special_tokens=True)
    raise Mistake(
        f"on {text!r} with stop={stop} your add() returned {pieces[:-1]!r} and finish() {pieces[-1]!r}: text came "
        f"out only with the token {tokenizer().decode(ids[n : n + 1])!r}, where the tail "
        f"{decoded[len(pieces[n]) :]!r} could begin {stop[0]!r} and was held back. On every token where nothing was "
        "held back your add() returned '', and without stop strings it returns '' on every token. A slice that ends "
        "at -hold is empty when hold is 0 (-0 is 0), not all the text not yet returned",
        NEGATIVE_SLICE,
    )
