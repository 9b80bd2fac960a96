"""Exercise 3's stretch, flag set: the search for stop strings starts len(s) - 1 characters before
`sent`, the start of the text not yet returned. An answer that first moves `sent` to the end of the
decoded text ("with the flag set everything goes out now") and only then searches from
sent - len(s) + 1 looks at the last len(s) - 1 characters only: too few to hold a whole stop string,
so it never finds one and the text after every stop string leaks.

Other mistakes also let text after a stop string leak, so `_leaked` in include_stop.py names this
one only when the answer, on 'one two three' (tokens 'one', ' two', ' three'), misses both 'two',
which ends with the token ' two', and 'tw', which ends inside it (`never_finds_a_stop`). A search
that finds only stop strings the text ends with finds 'two'; one that cuts at 'tw' but forgets
that it stopped has shown ' tw', not ' two', by then.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

SEARCH_AFTER_MOVE = (
    "search from max(0, sent - len(s) + 1) with sent still where the text not yet returned begins, and move sent "
    "to the end only after the search: a window that starts len(s) - 1 characters before the end of the text "
    "can never hold a whole stop string"
)
PROBE_TEXT, PROBE_TOKENS, PROBE_STOPS = "one two three", ["one", " two", " three"], ("two", "tw")


def never_finds_a_stop(cls) -> bool:
    """With the flag set, for each of PROBE_STOPS the second add() returns all of ' two' and the pieces
    join to all of PROBE_TEXT: neither stop string is found, though both lie in text not yet returned
    (False when the answer fails there: a probe only confirms)."""
    ids = tokenizer().encode(PROBE_TEXT)
    assert [tokenizer().decode([t]) for t in ids] == PROBE_TOKENS, f"setup: {PROBE_TEXT!r} must be {PROBE_TOKENS}"
    for s in PROBE_STOPS:
        pieces = probe_pieces(lambda s=s: cls(tokenizer(), [s], True), ids)
        if pieces is None or pieces[1] != " two" or "".join(pieces) != PROBE_TEXT:
            return False
    return True


def searched_after_the_move(said: str, cls) -> Mistake | None:
    """The mistake, its message led by `said` (what the case saw), when the probe confirms the answer
    never finds a stop string with the flag set; else None."""
    if cls is None or not never_finds_a_stop(cls):
        return None
    return Mistake(
        f"{said}. Your add() never finds a stop string with include_stop_str_in_output=True: on {PROBE_TEXT!r} "
        "it shows all the text with stop=['two'], a whole token not yet returned, and with stop=['tw']. The "
        "window it searches is shorter than the stop string, as when sent is moved to the end of the text "
        "before the search starts from sent - len(s) + 1",
        SEARCH_AFTER_MOVE,
    )
