"""Exercise 3: the text already known is decoded from the tokens read, ids[window:read], not ids[window:sent].

add() finds the new text as decode(ids[window:])[len(before):], with `before` the decode of the tokens
the window already took in: they end at `read`, a count of TOKENS. An answer that slices the ids with
`sent`, a count of the CHARACTERS returned, decodes the wrong tokens. On English text, with more
characters than tokens, ids[window:sent] already holds the newest token, so `now` is no longer than
`before` and the stream stalls (text comes out late, or is lost); on Chinese text, with fewer, it
holds too few and the new text repeats characters already taken.

The joined pieces look like other mistakes (text held back, lost or repeated), so `check_sliced_by_sent`
confirms this one on small inputs of its own: the answer's pieces are exactly those of the package's
detokenizer with this one change (`sliced_by_sent`), and not the right ones, on both kinds of text.
`_check_not_lost` in base.py asks it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, text_pieces
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

SLICED_BY_SENT = (
    "slice the token ids with read, the number of tokens already decoded: before is decode(ids[window:read]), "
    "not ids[window:sent], where sent counts characters returned, not tokens"
)
# 26 characters in 6 tokens, and 9 characters in 18 tokens ('大' one token, the others three)
PROBES = ["Hello there, one two three", "北京欢迎你们大家好"]


class sliced_by_sent(reference):
    """The package's detokenizer with one mistake: `before` is decoded from ids[window:sent]."""

    def add(self, token_id: int) -> str:
        if self.stopped:
            return ""
        self.ids.append(token_id)
        before = self._decode(self.ids[self._prefix_offset : self._released])
        window = self._decode(self.ids[self._prefix_offset :])
        if len(window) > len(before) and not window.endswith(REPLACEMENT):
            self._decoded += window[len(before) :]
            self._prefix_offset, self._read_offset = self._read_offset, len(self.ids)
        return self._release(final=False)


def check_sliced_by_sent(cls) -> None:
    """Raise SLICED_BY_SENT when, on every probe, the answer's pieces are those of `sliced_by_sent`."""
    seen = []
    for text in PROBES:
        wrong, right = text_pieces(sliced_by_sent, text), text_pieces(reference, text)
        assert wrong != right, f"setup: slicing the ids with sent must change the pieces of {text!r}"
        got = text_pieces(cls, text)
        if got != wrong:
            return
        seen.append(f"on {text!r} your pieces join to {''.join(got)!r}, expected {text!r}")
    raise Mistake(
        "; ".join(seen) + ". Your add() decodes the text it already took in as ids[window:sent], slicing the "
        "token ids with sent, a count of the characters returned, instead of read, the count of tokens decoded: "
        "with more characters than tokens that slice already holds the newest token, so nothing new is found; "
        "with fewer, it misses tokens already taken, and their text comes out again",
        SLICED_BY_SENT,
    )
