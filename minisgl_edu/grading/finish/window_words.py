"""A diagnosis for exercise 1: the decode window sized by the WORDS of the longest stop string
(len(s.split()) plus a margin), on the idea that a token is about a word. A stop string of emoji or
CJK characters has no spaces, so it is one word, yet its bytes can each be a token: the window misses
its start. The hand cases (expect.py) and the generated phase (scenes.py: _missed_stop) name it.

The probe runs the answer on 100 plain tokens with stop strings of its own and reads how many ids
each call passes to decode: the same width for two one-word strings of 1 and 60 bytes, and a width
that grows by exactly 10 from a string of 10 words to one of 20. A window of bytes grows with the
60 bytes; a fixed or kept window does not grow with the words (diagnoses.window_ignores_stops names
that one). A probe that raises counts as "not this mistake". `window_too_short` gives the hand
cases and the generated phase whichever of the two the answer shows, with what it decoded, or a
window sized by max(stop), the stop string that sorts last, not the longest
(diagnoses.window_of_alphabetical_max).
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.finish.diagnoses import (
    ALPHABETICAL_MAX,
    SIX_TOKENS,
    WINDOW_NOT_FROM_THIS_REQUEST,
    window_ignores_stops,
    window_of_alphabetical_max,
)
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _req, noting_decode

WINDOW_IN_WORDS = (
    "count the window in bytes, len(s.encode()), not in words, len(s.split()): a token is often less than a "
    "word, and a stop string of emoji or CJK characters has no spaces, so '🚀🚀🚀' is one word but 12 bytes, "
    "and the byte-level tokenizer can spend a token on each; decode max(len(s.encode()) for s in stop) tokens "
    "plus a margin"
)

# One word of 1 byte, one word of 60 bytes, then 10 and 20 words (a stop string the output never holds)
PROBES = ("!", "~" * 60, " ".join(["a"] * 10), " ".join(["a"] * 20))


def _widest(fn: Any, stop: str, *extra: Any) -> int:
    """The most ids the answer passes to one call of decode on 100 ' ok' tokens with stop=[stop]."""
    calls: list[list[int]] = []
    fn(_req([PLAIN] * 100, max_new=500, stop=[stop]), set(EOS), noting_decode(calls), *extra)
    return max((len(ids) for ids in calls), default=0)


def window_in_words(fn: Any, *extra: Any) -> tuple[int, int]:
    """(width for one word, width for 20 words) when the answer's window follows the words of the stop
    string: the same for '!' and '~' * 60, 10 tokens wider for 20 words than for 10. (0, 0) otherwise."""
    try:
        one, long_word, ten, twenty = (_widest(fn, stop, *extra) for stop in PROBES)
    except Exception:
        return (0, 0)
    if one == long_word and 1 <= one < 60 and twenty - ten == 10:
        return (one, twenty)
    return (0, 0)


def window_too_short(fn: Any, *extra: Any) -> Optional[tuple[str, str]]:
    """(what the answer decoded, the hint) when its window does not follow the bytes of the request's
    longest stop string: the same for every stop string (kept or fixed), sized by max(stop) (the one that
    sorts last), or counted in words. None otherwise."""
    width = window_ignores_stops(fn, *extra)
    if width:
        why = (
            f"your check decodes the last {width} tokens both for stop=['!'] (1 byte) and for a stop string of 60 "
            "bytes: its window does not follow this request's stop strings"
        )
        return why, WINDOW_NOT_FROM_THIS_REQUEST
    if window_of_alphabetical_max(fn, *extra):
        why = (
            f"your check finds {SIX_TOKENS!r} (its last 6 tokens) beside the stop string '!' but not beside '}}', "
            "which has as many bytes but sorts after it: its window follows max(stop), the alphabetically last"
        )
        return why, ALPHABETICAL_MAX
    one, twenty = window_in_words(fn, *extra)
    if one:
        why = (
            f"your check decodes the last {one} tokens both for stop=['!'] and for '~' * 60 (one word each), but "
            f"{twenty} for a stop string of 20 words: its window counts the stop string's words, not its bytes"
        )
        return why, WINDOW_IN_WORDS
    return None
