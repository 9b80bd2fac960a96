"""Exercise 3: the earliest stop string, taken with min() over str.find's results.

find returns -1 for a stop string that is not in the text, and -1 is smaller than any position, so
`min(text.find(s, sent) for s in stop)` is -1 as soon as one listed stop string is absent: the
answer then never cuts, although another stop string of the list is right there. Leave out the -1s
first (the positions that are >= 0), then take the smallest.

The hand cases name it (`check_absent_in_min`) only when a probe of the answer on 'one two three'
shows exactly this: stop ['three'] alone is cut, but ['three', 'xyz'] and ['xyz', 'three'] (an
absent stop string added, first or last) show everything. The generated phase has only the pieces:
they must be those of the package's detokenizer with this one mistake (`min_of_find`).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

ABSENT_IN_MIN = (
    "str.find returns -1 for a stop string that is not in the text, and min() over the results then picks that -1: "
    "keep only the positions >= 0 before taking the earliest"
)
PROBE_TEXT, FOUND, ABSENT = "one two three", "three", "xyz"


class min_of_find(reference):
    """The package's detokenizer with one mistake: the cut is min() over every stop string's find,
    -1 included, so one absent stop string means no cut at all."""

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        first = min((self._decoded.find(s, self._released) for s in self.stop), default=-1)
        if first >= 0:
            end, self.stopped = first, True
        elif final:
            end = len(self._decoded)
        else:
            end = len(self._decoded) - self._could_start_stop()
        out, self._released = self._decoded[self._released : end], end
        self.text += out
        return out


def _joined(cls, stop: list[str]) -> str:
    return "".join(pieces_of(cls(tokenizer(), list(stop)), tokenizer().encode(PROBE_TEXT)))


def lets_an_absent_stop_win(cls) -> bool:
    """On PROBE_TEXT the answer cuts at FOUND alone, but shows everything once ABSENT is in the list
    too, first or last (False when the answer fails there: a probe only confirms)."""
    try:
        alone = _joined(cls, [FOUND])
        with_absent = {_joined(cls, [FOUND, ABSENT]), _joined(cls, [ABSENT, FOUND])}
    except Exception:
        return False
    return alone == PROBE_TEXT[: PROBE_TEXT.index(FOUND)] and with_absent == {PROBE_TEXT}


def check_absent_in_min(cls, pieces: list[str], stop: list[str]) -> None:
    """Where the pieces show a stop string of `stop` and the probe confirms this mistake, name it."""
    joined = "".join(pieces)
    shown = [s for s in stop if s and s in joined]
    if cls is None or not shown or not lets_an_absent_stop_win(cls):
        return
    raise Mistake(
        f"your pieces {pieces!r} show the stop string {shown[0]!r}. On {PROBE_TEXT!r} your answer "
        f"cuts at [{FOUND!r}] but shows everything with [{FOUND!r}, {ABSENT!r}] or [{ABSENT!r}, {FOUND!r}]: "
        f"{ABSENT!r} is not in the text, find gives -1 for it, and min() takes that -1 over {FOUND!r}'s position",
        ABSENT_IN_MIN,
    )


def min_of_find_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `min_of_find` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(min_of_find(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)
