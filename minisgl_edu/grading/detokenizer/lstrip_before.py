"""Exercise 3: add() takes `before` off the front of the new decode by its length, not with str.lstrip.

add() finds the new text as decode(ids[window:])[len(before):]. An answer that writes
`now.lstrip(before)`, meant as "remove the prefix `before`", strips a set of characters: after all
of `before` it goes on eating the new text's first characters while they occur anywhere in
`before`. After ' the', the token ' then' comes out as 'n'; the letters are gone for good, which
the pieces alone show only as text that never comes out.

Text that never comes out has other causes too (a stale `before`, a window moved past a character
still being cut), so `check_lstripped_before` confirms this one on a small input of its own: the
answer's pieces are those of the package's detokenizer with this one change, and not the right ones.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, pieces_of, probe_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

# words that begin with letters of the word before them, so lstrip eats into them
TEXT = "the cat saw the then theme"
LSTRIPPED = (
    "cut before off the new decode by its length, now[len(before):], never with now.lstrip(before): lstrip "
    "removes a set of characters, so it also eats the new text's first letters that occur anywhere in before"
)


class lstripped_before(package_detokenizer):
    """The package's detokenizer with one mistake: the new text is `window.lstrip(prefix)`."""

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        prefix = self._decode(self.ids[self._prefix_offset : self._read_offset])
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(prefix) and not window.endswith(REPLACEMENT):
            self._decoded += window.lstrip(prefix)
            self._prefix_offset, self._read_offset = self._read_offset, len(self.ids)
        return self._release(final=False)


def check_lstripped_before(cls) -> None:
    """Raise LSTRIPPED when the answer's pieces on TEXT (no stop strings, every character one token
    or less) are those `lstripped_before` gives, which do not join to the text."""
    ids = tokenizer().encode(TEXT)
    wrong = pieces_of(lstripped_before(tokenizer(), []), ids)
    assert "".join(wrong) != TEXT, "setup: lstrip must eat letters of TEXT"
    pieces = probe_pieces(lambda: cls(tokenizer(), []), ids)
    if pieces != wrong:
        return
    raise Mistake(
        f"on {TEXT!r} (no stop strings, no character across tokens) your pieces are {pieces!r}, joined "
        f"{''.join(pieces)!r}: the letters lost are those of the new text that also occur in the text before it "
        "(after ' the', ' then' comes out as 'n'). str.lstrip(before) removes any of before's characters, not the "
        "prefix before: take the new text as now[len(before):]",
        LSTRIPPED,
    )
