"""Exercise 1: a decode window sized in bytes but capped ("so one client's very long stop string
cannot make every step decode a huge tail"), `min(len(s.encode()) + margin, CAP)`. The window must
fit this request's own longest stop string: one of more bytes than the cap (six emoji flags, 48 bytes,
spanning 36 byte tokens) never shows whole in the tail, and the request runs on past it.

The probe tells it from a window counted in characters (character_window.py: it grows by the bytes of
'我', 3 a character, not by 1) and from one of a fixed size (diagnoses.window_ignores_stops: this one
grows with short stop strings); windows.case_stop_emoji_margin names it with WINDOW_CAPPED.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _req, noting_decode

WINDOW_CAPPED = (
    "size the window from this request's longest stop string, max(len(s.encode()) for s in stop) plus a margin, "
    "with no upper cap: a client's stop string may span dozens of tokens (one byte token each), and a capped "
    "window never holds it whole, so the request runs on past it (the cost is one decode of that window a token)"
)
OUTPUT = 400  # ' ok' tokens: more than any window the probe asks for


def _widest(fn: Any, stop: str, *extra: Any) -> int:
    """The most ids the answer passes to one call of decode on OUTPUT ' ok' tokens with stop=[stop]."""
    calls: list[list[int]] = []
    fn(_req([PLAIN] * OUTPUT, max_new=2 * OUTPUT, stop=[stop]), set(EOS), noting_decode(calls), *extra)
    return max((len(ids) for ids in calls), default=0)


def window_cap(fn: Any, *extra: Any) -> int:
    """The cap, when the answer's window follows the stop string's bytes for short ones ('我' to '我' * 4
    widens it by 9 tokens, 3 a character) but stops growing below their bytes for long ones (the same
    width for '我' * 90 and '我' * 100, fewer tokens than 270 bytes). 0 otherwise (or when a probe raises)."""
    try:
        one, four, ninety, hundred = (_widest(fn, "我" * k, *extra) for k in (1, 4, 90, 100))
    except Exception:
        return 0
    by_bytes = one >= 3 and four - one == 9
    return hundred if by_bytes and ninety == hundred < 270 else 0
