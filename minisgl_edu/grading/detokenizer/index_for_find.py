"""Exercise 3, base part: each stop string is looked for with str.find, which returns -1 when the
text does not hold it. An answer that calls str.index instead raises ValueError('substring not
found') whenever a stop string is not (yet) in the text, that is with nearly every token.

A crash alone names no mistake, so `_objects_apart` in base.py, which sees every hand case that fails,
names this one only when the case stopped with that ValueError AND the answer raises it on a small
input of its own where the stop string is absent, but not where it is present (`index_not_find`).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

INDEX_FOR_FIND = (
    "look for a stop string with str.find, which returns -1 when it is absent; str.index raises ValueError "
    "there, and a stop string is absent with nearly every token"
)
PROBE_TEXT, ABSENT, PRESENT = "one two", "xyz", "one"  # "one": in the text from the first token on
NOT_FOUND = "substring not found"  # the message of str.index's ValueError


def _raises_not_found(cls, stop: str) -> bool:
    try:
        pieces_of(cls(tokenizer(), [stop]), tokenizer().encode(PROBE_TEXT))
    except ValueError as e:
        return NOT_FOUND in str(e)
    except Exception:
        return False
    return False


def index_not_find(cls) -> bool:
    """The answer raises str.index's ValueError on PROBE_TEXT with an absent stop string, and not with
    one that is in the text from the first token on (every search finds it)."""
    return _raises_not_found(cls, ABSENT) and not _raises_not_found(cls, PRESENT)


def check_index_for_find(cls, crash: BaseException) -> None:
    """Raise the mistake when `crash` (what stopped the case) is str.index's ValueError and the probe
    confirms the answer searches with str.index."""
    if isinstance(crash, ValueError) and NOT_FOUND in str(crash) and index_not_find(cls):
        raise Mistake(
            f"your code raised ValueError({NOT_FOUND!r}): on {PROBE_TEXT!r} it raises that with stop "
            f"[{ABSENT!r}], which is not in the text, and not with [{PRESENT!r}], which is. That is str.index "
            "looking for a stop string that is absent, where str.find returns -1",
            INDEX_FOR_FIND,
        ) from crash
