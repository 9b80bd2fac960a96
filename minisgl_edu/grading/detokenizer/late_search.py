"""Exercise 3: a stop-string search that starts one character past the text not yet returned,
`decoded.find(s, sent + 1)` for `decoded.find(s, sent)`.

The first character not yet returned is exactly where a stop string begins when it was held back:
the held-back tail is the start of a stop string, so a search that skips that character misses
every held-back stop string ('three four' over ' three' and ' four'), and a 1-character stop
string that a token brings right after the returned text (',' in 'one, two').

When the hand cases see a stop string shown, `check_search_start` probes the answer on two short
streams to tell this mistake from the others that show one (a search of the newest piece only, no
search at all):

* 'one, two' (tokens 'one', ',', ' two') with stop=[','] comes out whole: the ',' begins at the
  first character not yet returned, and the search never looks there;
* 'one two three four' with stop=['three four', 'hree four'] is cut at 'one two t': ' three' is
  held back whole (the start of 'three four'), and the search, one character into that tail, finds
  'hree four' but not 'three four', which begins one character earlier.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

SEARCH_START = (
    "start the search at the first character not yet returned, decoded.find(s, sent), not one character "
    "later: a stop string may begin right there (a held-back tail always begins with one)"
)
# (text, its tokens, stop list, what an answer whose search starts at sent + 1 shows)
PROBES = [
    ("one, two", ["one", ",", " two"], [","], "one, two"),
    ("one two three four", ["one", " two", " three", " four"], ["three four", "hree four"], "one two t"),
]


def _joined(cls, ids: list[int], stop: list[str]) -> str:
    return "".join(pieces_of(cls(tokenizer(), list(stop)), ids))


def _starts_one_late(cls) -> bool:
    """Both probes come out as a search from sent + 1 makes them."""
    for text, tokens, stop, late in PROBES:
        ids = tokenizer().encode(text)
        assert [tokenizer().decode([t]) for t in ids] == tokens, f"setup: {text!r} must be the tokens {tokens}"
        try:
            if _joined(cls, ids, stop) != late:
                return False
        except Exception:
            return False
    return True


def check_search_start(cls, n: int, shown: str, stop: str) -> None:
    """After token `n` the answer had shown `shown`, the stop string `stop` included: raise the
    SEARCH_START mistake when the probes show a search that starts one character late."""
    if cls is None or not _starts_one_late(cls):
        return
    raise Mistake(
        f"after token {n} your add() had returned {shown!r}, the stop string {stop!r} included. Your search "
        "for stop strings starts one character after the text not yet returned: on 'one, two' with stop=[','] "
        "your pieces join to 'one, two' (the ',' begins at the first character not yet returned), and on "
        "'one two three four' with stop=['three four', 'hree four'] they join to 'one two t' (you held back "
        "'three', then found 'hree four' but not 'three four', which begins one character earlier, where the "
        "held-back tail begins)",
        SEARCH_START,
    )
