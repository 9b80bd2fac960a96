"""Exercise 3: the search for a stop string reaches the last character of the decoded text.

str.find(s, start, end) looks in text[start:end], and that end is exclusive. An answer that passes
-1 as the end, meant as "to the end" the way a slice is read from the back, searches all but the
last character: a stop string that ends exactly at the end of the decoded text (the usual case,
the token that completes it ends there) is not found, and, being a whole stop string and no start
of one, it is not held back either: it is shown.

`check_search_reaches_the_end` plays 'one two three' with stop ['two'] (the token ' two' ends it at
the last character decoded so far) and 'one twos' with the same stop string (the token 'os' brings
one more character after it): the answer misses the first and finds the second. The hand cases
ask it before their own words (search all the text not yet returned, offset zero, which stop
string wins); the generated phase has only the pieces, which must be `end_one_short`'s.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of, text_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

FIND_END = (
    "a stop string that ends exactly at the end of the decoded text was not found: the search must reach the last "
    "character. str.find's end argument is exclusive, and -1 stops one character short, so leave the end out "
    "(or pass len(text))"
)
STOP = ["two"]
AT_THE_END, ONE_MORE = ("one two three", "one two three"), ("one twos", "one ")  # (text, what the answer shows)


class end_one_short(reference):
    """The package's detokenizer with one mistake: each stop string is searched with an end of -1,
    so the last decoded character is never looked at."""

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        hits = [i for i in (self._decoded.find(s, self._released, -1) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self._decoded)
        else:
            end = len(self._decoded) - self._could_start_stop()
        out, self._released = self._decoded[self._released : end], end
        self.text += out
        return out


def find_end_pieces(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of `end_one_short` and not the package's own (generated phase)."""
    tok = tokenizer()
    return pieces == pieces_of(end_one_short(tok, list(stop)), ids) != pieces_of(reference(tok, list(stop)), ids)


def check_search_reaches_the_end(cls) -> None:
    """Raise FIND_END when the answer shows STOP where it ends at the last decoded character, yet
    cuts before it where one more character follows it in the same token."""
    if cls is None:
        return
    got = [text_pieces(cls, text, STOP) for text, _ in (AT_THE_END, ONE_MORE)]
    if any(p is None for p in got) or ["".join(p) for p in got] != [AT_THE_END[1], ONE_MORE[1]]:
        return
    raise Mistake(
        f"stop={STOP!r}: on {AT_THE_END[0]!r} (tokens 'one', ' two', ' three') your pieces {got[0]!r} show 'two', "
        f"which ends at the last character decoded after ' two'; on {ONE_MORE[0]!r} (tokens 'one', ' tw', 'os'), "
        f"where one more character follows it, your pieces {got[1]!r} are cut before it. Your search stops one "
        "character short of the end of the text",
        FIND_END,
    )
