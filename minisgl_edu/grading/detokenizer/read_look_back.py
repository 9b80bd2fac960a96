"""Exercise 3's stretch: the look-back measured from the tokens read instead of the characters returned.

With the flag set, the search for a stop string starts len(s) - 1 characters before the text not yet
returned, max(0, sent - len(s) + 1), where `sent` counts CHARACTERS. An answer that writes the token
counter `read` there gets the same start while a token is about one character, but where a character
takes several tokens (CJK, emoji) `read` runs ahead of `sent`: the search starts past the beginning of
a stop string that began in text already returned, and that stop string is missed.

The leaked text looks like other missed searches, so `looked_back_from_read` confirms this one on
small inputs of its own: the answer's pieces are exactly those of the reference with this one change
(`_read_look_back`) on an English stream, where it still looks back, and on a Chinese one, where it
misses the stop string, though a start one character late would find it. `_skipped_search` in include_stop.py asks it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.detokenizer.stop_keeping import _no_look_back, reference_stop_keeping
from minisgl_edu.grading.harness import tokenizer

# 'e two' begins in 'one', returned already: found only by a look-back (3 tokens, 13 characters).
# '京一个' begins in '京', returned already, and is completed by the token '一个' (two characters): '北京'
# takes 4 tokens, so read (5) runs ahead of sent (2). The look-back of 1 character that a start one
# character late gives still finds it, so that mistake (missed_stop.py) does not play this one.
PROBES = [("one two three", "e two"), ("北京一个人", "京一个")]

LOOK_BACK_FROM_READ = (
    "measure the look-back from sent, the characters already returned, max(0, sent - len(s) + 1), not from "
    "read, the tokens decoded: where a character takes several tokens read runs ahead of sent, and the search "
    "starts past a stop string that began in returned text"
)


class _read_look_back(reference_stop_keeping):
    """The reference with one mistake: the look-back starts len(s) - 1 TOKENS before the tokens read."""

    def _search_start(self, s: str) -> int:
        return max(0, self._read_offset - len(s) + 1)


def _pieces(cls, text: str, stop: str) -> list[str] | None:
    try:
        return _stream(cls, tokenizer().encode(text), [stop], True)
    except Exception:
        return None


def looked_back_from_read(cls, said: str) -> Mistake | None:
    """The Mistake that names this look-back, after `said` (what the answer showed), if on every probe
    the answer's pieces are those of `_read_look_back`; else None."""
    if cls is None:
        return None
    (english, found), (chinese, missed) = PROBES
    assert _pieces(_read_look_back, english, found) != _pieces(_no_look_back, english, found), "setup: looks back"
    assert _pieces(_read_look_back, chinese, missed) != _pieces(reference_stop_keeping, chinese, missed), "setup"
    for text, stop in PROBES:
        if _pieces(cls, text, stop) != _pieces(_read_look_back, text, stop):
            return None
    return Mistake(
        f"{said}. On {english!r} you find {found!r}, which began in text already returned, yet on {chinese!r} "
        f"with stop=[{missed!r}] your pieces join to the whole text, expected '北京一个': your search starts "
        "len(s) - 1 back from read, the number of tokens decoded, not from sent, the number of characters "
        "returned. '北京' takes 4 tokens, so after '一个' read is 5 and sent 2: the search starts past the stop "
        "string, which began in text you had already returned",
        LOOK_BACK_FROM_READ,
    )
