"""Exercise 3 and its stretch: the two decodes that add() compares must both skip special tokens.

add() finds the new text as decode(ids[window:])[len(before):], with before = decode(ids[window:read]).
An answer that decodes the window with skip_special_tokens=True but `before` with a plain
`tokenizer.decode(...)` compares two decodes that disagree as soon as a special token sits in
ids[window:read]: `before` then holds '<|im_end|>' (10 characters) that the window decode does not, so
the text of the next tokens is cut by that many characters or held back until finish().

Text that is cut or held back has other causes too, so this is confirmed by playing the package's
detokenizer with this one change: on the hand cases' small input of its own (`check_special_before`,
which runs the answer) and on a generated scene's stream (`special_before_pieces`, whose pieces the
answer's must equal).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, pieces_of, probe_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

SPECIAL_BEFORE = (
    "decode `before` (ids[window:read]) with skip_special_tokens=True too, like the window: with a special token "
    "in ids[window:read] a plain decode of it is longer than the window's, and the next tokens' text is cut"
)


class special_before(package_detokenizer):
    """The package's detokenizer with one mistake: `before` is decoded with the special tokens kept."""

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self.tokenizer.decode(self.ids[self._prefix_offset : self._read_offset])
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(before) and not window.endswith(REPLACEMENT):
            self._decoded += window[len(before) :]
            self._prefix_offset, self._read_offset = self._read_offset, len(self.ids)
        return self._release(final=False)


def probe_ids() -> list[int]:
    """'Hello there', then <|im_end|> in the middle of the stream, then ' and more words'."""
    tok = tokenizer()
    return tok.encode("Hello there") + [tok.convert_tokens_to_ids("<|im_end|>")] + tok.encode(" and more words")


def special_before_pieces(ids: list[int], stop: list[str]) -> list[str]:
    """The pieces `special_before` gives for `ids` with `stop`."""
    return pieces_of(special_before(tokenizer(), list(stop)), ids)


def check_special_before(make) -> None:
    """Raise SPECIAL_BEFORE when the answer (`make(tokenizer)` builds one without stop strings) gives on
    `probe_ids()` exactly the pieces of `special_before`, which are not the right ones."""
    ids = probe_ids()
    wrong, right = special_before_pieces(ids, []), pieces_of(package_detokenizer(tokenizer(), []), ids)
    assert "".join(wrong) != "".join(right), "setup: a special `before` must lose text on the probe"
    got = probe_pieces(lambda: make(tokenizer()), ids)
    if got != wrong:
        return
    raise Mistake(
        f"on 'Hello there' + <|im_end|> + ' and more words' your pieces are {got!r}, expected {right!r}: after the "
        "special token your add() compared the window decode (special tokens skipped) with a `before` decoded with "
        "them kept, '<|im_end|>' included, so the new text was cut by its length",
        SPECIAL_BEFORE,
    )
