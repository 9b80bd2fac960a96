"""Exercise 3's stretch: a stop string skipped because it is longer than the text not yet returned.

With the flag set, an answer that skips, as a shortcut, every stop string longer than the text it has
not returned yet ("it cannot fit in there") forgets that a stop string may begin in text already
returned. With the flag set nothing is held back, so the unsent text is only the newest token's: a stop
string longer than that token is never looked for, and the text after it is shown.

`skipped_when_longer` confirms it with one stop string, 'e four', that begins in text already returned
in both of two streams: the answer misses it where the token completing it, ' four', is shorter than it,
and finds it where that token, ' fourteen', is longer. `_not_how_it_begins` in include_stop.py asks it
beside look_back_start.py's probe.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.harness import tokenizer

STOP = "e four"
SHORT, LONG = "one two three four five", "one two three fourteen"  # completed by ' four' (5), ' fourteen' (9)
EXPECTED = "one two three four"

LONGER_THAN_UNSENT = (
    "never skip a stop string because it is longer than the text not yet returned: it may begin in text "
    "already returned, so search for every stop string from max(0, sent - len(s) + 1), whatever its length"
)


def _skips_stops_longer_than_the_unsent_text(cls) -> bool:
    """The answer misses 'e four' when the token ' four' (shorter than it) completes it, and finds it
    when ' fourteen' (longer than it) does: the length of the newest text decided."""
    if cls is None:
        return False
    words = {text: [tokenizer().decode([t]) for t in tokenizer().encode(text)] for text in (SHORT, LONG)}
    assert words[SHORT][3] == " four" and words[LONG][3:] == [" fourteen"], f"setup: the tokens: {words}"
    try:
        kept = ["".join(_stream(cls, tokenizer().encode(text), [STOP], True)) for text in (SHORT, LONG)]
    except Exception:
        return False
    return kept == [SHORT, EXPECTED]


def skipped_when_longer(cls, said: str) -> Mistake | None:
    """The Mistake that names this skip, after `said` (what the answer showed), if the probe confirms
    the answer makes it; else None."""
    if not _skips_stops_longer_than_the_unsent_text(cls):
        return None
    return Mistake(
        f"{said}. Your search skips a stop string longer than the text not yet returned: with stop=[{STOP!r}] "
        f"your pieces join to {SHORT!r} on {SHORT!r}, expected {EXPECTED!r}, where the token ' four' (5 "
        f"characters) completes it, yet on {LONG!r} you find it, where ' fourteen' (9 characters) does. The "
        "stop string began in text you had already returned, so it does not have to fit in the unsent text",
        LONGER_THAN_UNSENT,
    )
