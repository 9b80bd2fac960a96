"""Exercise 3: a position found in the text not yet returned counts from `sent`, not from 0.

An answer that looks for the stop strings in `unsent = decoded[sent:]` and cuts at
`decoded[sent:i]` uses a position in `unsent` as a position in `decoded`. While nothing was
returned (sent == 0), or the stop string begins right at `sent` (i == 0), that does no harm; else the
cut lands `sent` characters too early, often before `sent` (an empty piece), and the text between
the last piece and the stop string never comes out.

The pieces alone can look like the space before the stop string stripped (space_before_stop.py),
where the text lost is just that space; `check_cut_from_sent` plays two probes, one of them losing a
word held back as a false start as well ('two ' of 'one two three' with stop ['two!', 'three']), and
names the mistake where the answer's pieces are those of the package's detokenizer with this one
change (`found_in_unsent`) on both. `cut_from_sent_pieces` gives them for the generated scenes.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

CUT_FROM_SENT = (
    "the text between the last piece and the stop string never came out: a position that find() gives in "
    "decoded[sent:] counts from sent, so in decoded the stop string begins at sent + i; cut there, or search with "
    "decoded.find(s, sent), whose position counts from 0"
)
# (text, stop list): the gap lost is a space, then a word held back as a false start and a space
PROBES = [("one two, three", ["three"]), ("one two three", ["two!", "three"])]


class found_in_unsent(reference):
    """The package's detokenizer with one mistake: the stop string's position is found in the text
    not yet returned and cut at as a position in all the decoded text."""

    def _release(self, final: bool) -> str:
        unsent = self._decoded[self._released :]
        hits = [i for i in (unsent.find(s) for s in self.stop) if i >= 0]
        if self.stopped or not hits:
            return super()._release(final)
        end, self.stopped = max(min(hits), self._released), True
        out, self._released = self._decoded[self._released : end], end
        return out


def cut_from_sent_pieces(ids: list[int], stop: list[str]) -> list[str]:
    """The pieces of `found_in_unsent` on `ids`: each add()'s, then finish()'s."""
    return pieces_of(found_in_unsent(tokenizer(), list(stop)), ids)


def check_cut_from_sent(cls) -> None:
    """Raise CUT_FROM_SENT when, on every probe, the answer's pieces are those of `found_in_unsent`."""
    if cls is None:
        return
    for text, stop in PROBES:
        ids = tokenizer().encode(text)
        assert cut_from_sent_pieces(ids, stop) != pieces_of(reference(tokenizer(), stop), ids), (
            "setup: the probe must tell the cut apart"
        )
        if text_pieces(cls, text, stop) != cut_from_sent_pieces(ids, stop):
            return
    text, stop = PROBES[1]
    ids = tokenizer().encode(text)
    expected, got = "".join(pieces_of(reference(tokenizer(), stop), ids)), "".join(cut_from_sent_pieces(ids, stop))
    raise Mistake(
        f"on {text!r} with stop={stop} your pieces join to {got!r}, expected {expected!r}: after ' two' your add() had "
        f"returned {got!r} and held back 'two', a possible start of 'two!'; ' three' then completed 'three', and "
        f"{expected[len(got) :]!r}, the text between your last piece and the stop string, never came out. The stop "
        f"string begins at character {text.find('three')} of the text, at {text.find('three') - len(got)} of the text "
        "not yet returned, and your cut was at that second position, as if it counted from 0",
        CUT_FROM_SENT,
    )
