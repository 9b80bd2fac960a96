"""Exercise 3: the tail held back is tested on the text as it is, trailing whitespace included.

A stop string can begin with whitespace: '\\nUser:' (the next turn of a chat), ' four'. An answer
that tests for the start of a stop string on the text with its trailing whitespace stripped
(`decoded.rstrip().endswith(s[:k])`, "a space at the end is not the start of anything") shows that
newline or space at once; the search for stop strings then begins after it, so the stop string is
never found and all of it reaches the client. The stripped test also holds back the wrong characters:
after 'one two\\n' with stop=['two three'] it holds back three characters because 'one two' ends in
'two', and those are 'wo\\n', so it shows 'one t'.

The pieces alone look like a search that missed the stop string, so `check_stripped_tail` confirms
this mistake on two small inputs of its own: the answer's pieces are exactly those of the package's
detokenizer with this one change (`stripped_tail`), and not the right ones, on both.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

STRIPPED_TAIL = (
    "test for the start of a stop string on the text as it is, never on text.rstrip(): a stop string may begin with "
    "whitespace ('\\nUser:', ' four'), so a trailing newline or space can be its start and is held back like any other"
)
# (text, stop list): a newline that begins the stop string, then a stop string's start followed by a newline
PROBES = [("Hello\nUser: hi", ["\nUser:"]), ("one two\nthree", ["two three"])]


class stripped_tail(reference):
    """The package's detokenizer with one mistake: the tail to hold back is found on the text with
    its trailing whitespace stripped, but its length is cut off the end of the text as it is."""

    def _could_start_stop(self) -> int:
        pending, text = len(self._decoded) - self._released, self._decoded.rstrip()
        starts = [k for s in self.stop for k in range(1, len(s)) if k <= pending and text.endswith(s[:k])]
        return max(starts, default=0)


def stripped_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `stripped_tail` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(stripped_tail(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)


def check_stripped_tail(cls, pieces: list[str], stop: list[str]) -> None:
    """Where the pieces show a stop string of `stop`, raise STRIPPED_TAIL when, on every probe, the
    answer's pieces are those of `stripped_tail`."""
    shown = [s for s in stop if s and s in "".join(pieces)]
    if cls is None or not shown:
        return
    seen = []
    for text, probe_stop in PROBES:
        wrong, right = text_pieces(stripped_tail, text, probe_stop), text_pieces(reference, text, probe_stop)
        assert wrong != right, f"setup: the stripped test must change the pieces of {text!r}"
        got = text_pieces(cls, text, probe_stop)
        if got != wrong:
            return
        seen.append(f"on {text!r} with stop={probe_stop!r} they are {got!r}, expected {right!r}")
    raise Mistake(
        f"your pieces {pieces!r} show the stop string {shown[0]!r}; " + "; ".join(seen) + ". Your answer tests for "
        "the start of a stop string on the text with its trailing whitespace stripped: the newline that begins "
        "'\\nUser:' went out at once (so the stop string was never found after it), and after 'one two\\n' it held "
        "back 'wo\\n', as long as 'two', the start of 'two three' that the stripped text ends in",
        STRIPPED_TAIL,
    )
