"""Exercise 3: str.find's -1 ("not found") is tested before any offset is added to it.

An answer that searches the text not yet returned, `decoded[sent:].find(s)`, turns the position into
one in `decoded` by adding `sent`. Done before the test for -1, a stop string that is not there reads
as a hit at sent - 1, a valid position as soon as some text was returned: the answer cuts there (an
empty piece), marks itself stopped, and the stream ends after its first piece, although no stop
string ever came. With no stop string, or before any text went out, it streams right.

The hand cases name it (`check_not_found_offset`, asked whenever a hand case fails) only where a
probe shows exactly this: 'one two three four' with stop ['xyz'] gives the pieces of the package's
detokenizer with this one mistake (`offset_before_test`: 'one', then nothing), and with no stop
string the whole text. The generated phase has only the pieces: they must be `offset_before_test`'s.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

NOT_FOUND_OFFSET = (
    "with a stop string that never occurs the stream ended after its first piece: find() returns -1 when the stop "
    "string is not there, and -1 + sent is a valid position once text was returned. Test for -1 before adding the "
    "offset of the slice you searched (or use decoded.find(s, sent), which counts from 0)"
)
PROBE_TEXT, ABSENT = "one two three four", ["xyz"]


class offset_before_test(reference):
    """The package's detokenizer with one mistake: each stop string's position in the text not yet
    returned gets the offset `_released` added before the test for -1, so an absent one is a hit."""

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        found = (self._decoded[self._released :].find(s) + self._released for s in self.stop)
        hits = [i for i in found if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self._decoded)
        else:
            end = len(self._decoded) - self._could_start_stop()
        out, self._released = self._decoded[self._released : end], end
        self.text += out
        return out


def not_found_offset_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `offset_before_test` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(offset_before_test(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)


def check_not_found_offset(cls) -> None:
    """Raise NOT_FOUND_OFFSET when the probe shows the stream ended by a stop string that is absent."""
    ids = tokenizer().encode(PROBE_TEXT)
    got, plain = text_pieces(cls, PROBE_TEXT, ABSENT), text_pieces(cls, PROBE_TEXT)
    if got is None or plain is None or not not_found_offset_pieces(ids, ABSENT, got):
        return
    if "".join(plain) != PROBE_TEXT:
        return  # it fails without stop strings too: another mistake, the case's own words stand
    raise Mistake(
        f"on {PROBE_TEXT!r} with stop={ABSENT} your pieces are {got!r}: {ABSENT[0]!r} is not in the text, yet the "
        f"stream ended after its first piece {got[0]!r}, as if {ABSENT[0]!r} had been found right at its end (with "
        "no stop string the same tokens stream the whole text). find() gave -1 for it, and -1 plus the offset of "
        "the text you searched (sent) is a valid position, sent - 1",
        NOT_FOUND_OFFSET,
    )
