"""Exercise 3: the cut is at the position where the stop string begins, an exclusive end.

find() gives the index of the stop string's first character, and `decoded[sent:i]` is the text before
it. An answer that cuts at i - 1 ("the last character before the stop string") loses that character
too, and a stop string at character 0 gives decoded[0:-1], which shows it. Where the stop string
begins at `sent` (its start was held back) the lost character had gone out already, so most streams
hide it.

The pieces can look like the space before the stop string stripped (space_before_stop.py), where the
character lost is a space; `check_cut_one_early` names this mistake first, where the answer's pieces
are those of the package's detokenizer with this one change (`cut_one_early`) on two probes: one
loses a letter ('one ' for 'one two three' with stop ['wo']), the other has the stop string at
character 0 ('on' for stop ['one']). `one_early_pieces` gives them for the generated scenes.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

ONE_EARLY = (
    "the text ends one character before the stop string: find() gives where the stop string begins, which is "
    "already the exclusive end of the text before it: slice decoded[sent:i], not decoded[sent:i - 1]"
)
# (text, stop list, what the answer shows): a letter lost before the stop string, a stop string at 0
PROBES = [("one two three", ["wo"], "one "), ("one two three", ["one"], "on")]


class cut_one_early(reference):
    """The package's detokenizer with one mistake: the cut is one character before the stop string."""

    def _release(self, final: bool) -> str:
        hits = [i for i in (self._decoded.find(s, self._released) for s in self.stop) if i >= 0]
        if self.stopped or not hits:
            return super()._release(final)
        end, self.stopped = min(hits) - 1, True
        out, self._released = self._decoded[self._released : end], end
        self.text += out
        return out


def one_early_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `cut_one_early` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(cut_one_early(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)


def check_cut_one_early(cls) -> None:
    """Raise ONE_EARLY when, on every probe, the answer's pieces are those of `cut_one_early`."""
    if cls is None:
        return
    for text, stop, _ in PROBES:
        got = text_pieces(cls, text, stop)
        if got is None or not one_early_pieces(tokenizer().encode(text), stop, got):
            return
    (text, stop, got), (_, zero, at_zero) = PROBES
    expected = text[: text.find(stop[0])]
    raise Mistake(
        f"on {text!r} with stop={stop} your pieces join to {got!r}, expected {expected!r}: the text ends one "
        f"character before the stop string, {expected[-1]!r} is lost. With stop={zero}, at character 0, they join "
        f"to {at_zero!r}, expected '': the cut at 0 - 1 = -1 made decoded[0:-1]. Your cut is one before where the "
        "stop string begins",
        ONE_EARLY,
    )
