"""Exercise 3: `before`, the text add() cuts off the new decode, is decoded from the window as it is now.

add() finds the new text as decode(ids[window:])[len(before):], with before = decode(ids[window:read]).
An answer that saves a decode by keeping the last window decode (`now`) as the next add()'s `before`
cuts at the wrong place once the window moves on: that decode began at the old window, one token
further back, so it is longer than decode(ids[window:read]) and the new text loses its first
characters. On plain text with no character across tokens, 'one two three' streams as 'one tworee'.

Text that never comes out has other causes too (a window moved past a character still being cut), so
`check_stale_before` confirms this one on a small input of its own: the answer's pieces are those of
the package's detokenizer with this one change, and not the right ones.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, pieces_of, probe_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

TEXT = "one two three four five"
STALE_BEFORE = (
    "before is decode(ids[window:read]) of the window as it is now: the last add()'s decode began at the old "
    "window, a token further back, so cutting its length off the new decode drops the new text's first characters"
)


class stale_before(package_detokenizer):
    """The package's detokenizer with one mistake: `before` is the previous add()'s window decode."""

    _last = ""

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(self._last) and not window.endswith(REPLACEMENT):
            self._decoded += window[len(self._last) :]
            self._prefix_offset, self._read_offset = self._read_offset, len(self.ids)
            self._last = window
        return self._release(final=False)


def check_stale_before(cls) -> None:
    """Raise STALE_BEFORE when the answer's pieces on TEXT (no stop strings, every character one token
    or less) join to what `stale_before` gives, which is not the text."""
    ids = tokenizer().encode(TEXT)
    wrong = "".join(pieces_of(stale_before(tokenizer(), []), ids))
    assert wrong != TEXT, "setup: the stale `before` must lose text on TEXT"
    pieces = probe_pieces(lambda: cls(tokenizer(), []), ids)
    if pieces is None:
        return
    got = "".join(pieces)
    if got != wrong:
        return
    raise Mistake(
        f"on {TEXT!r} (no stop strings, no character across tokens) your pieces join to {got!r}: after the window "
        "moved on, your add() cut the new decode at the length of the last add()'s decode, which began at the old "
        "window, a token further back. Compare the new decode with before = decode(ids[window:read]), decoded "
        "from the window as it is now",
        STALE_BEFORE,
    )
