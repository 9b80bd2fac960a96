"""Exercise 3: `before` is decoded from all the window's tokens already read, ids[window:read].

add() finds the new text as decode(ids[window:])[len(before):]. An answer that decodes `before` from
the last read token alone (`decode(ids[read - 1:read])`) gets the same text while every token is a
whole character: the window is then one token back. After an add() that completed a character of
several tokens, the window holds all of them, and the last one alone decodes to something else: a
byte token decodes to '\\ufffd' (or two), so the next piece loses characters (' ok' after '🙂' comes
out as 'ok') or repeats them (' two' after ' 北' comes out as '北 two').

The joined pieces look like many other mistakes, so `check_last_token_before` confirms this one on
small inputs of its own: the answer's pieces are exactly those of the package's detokenizer with this
one change (`last_token_before`), and not the right ones, on both.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

LAST_TOKEN_BEFORE = (
    "before is decode(ids[window:read]), every token of the window already read: after an add() that took in "
    "several tokens at once (a character of several tokens), the last read token alone decodes to other text "
    "(bytes alone decode to '\\ufffd'), so cutting its length off the new decode drops or repeats characters"
)
# '🙂' is two tokens, the second two bytes ('\ufffd\ufffd' alone); '北' is three, the last one byte ('\ufffd')
PROBES = ["🙂 ok", "one 北 two three"]


class last_token_before(reference):
    """The package's detokenizer with one mistake: `before` is the decode of the last read token alone."""

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        read = self._read_offset
        before = self._decode(self.ids[read - 1 : read]) if read else ""
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(before) and not window.endswith(REPLACEMENT):
            self._decoded += window[len(before) :]
            self._prefix_offset, self._read_offset = self._read_offset, len(self.ids)
        return self._release(final=False)


def last_token_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `last_token_before` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(last_token_before(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)


def check_last_token_before(cls) -> None:
    """Raise LAST_TOKEN_BEFORE when, on every probe, the answer's pieces are those of `last_token_before`."""
    seen = []
    for text in PROBES:
        wrong, right = text_pieces(last_token_before, text), text_pieces(reference, text)
        assert wrong != right, f"setup: `before` from the last token must change the pieces of {text!r}"
        got = text_pieces(cls, text)
        if got != wrong:
            return
        seen.append(f"on {text!r} your pieces are {got!r}, expected {right!r}")
    raise Mistake(
        "; ".join(seen) + ". After the add() that completed a character of several tokens, your add() cut the new "
        "decode at the length of the last read token decoded alone (bytes that alone decode to '\\ufffd'), "
        "instead of the length of decode(ids[window:read]), the text of every token of the window already read",
        LAST_TOKEN_BEFORE,
    )
