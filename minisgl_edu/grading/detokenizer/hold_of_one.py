"""Exercise 3: the held-back tail is k characters, k the length of the longest start that fits.

An answer that works the length out as `max(decoded.endswith(s[:k]) for s ... for k ...)` takes
the max of the test, not of k: a bool. Wherever some start of a stop string ends the text, the max
is True, which Python counts as 1 in `len(decoded) - hold`, so exactly one character is held back
whatever the length of that start: after ' three' of 'one two three' with the stop string
'three four', 'thre' goes out and only 'e' waits.

`check_hold_of_one` plays three probes beside the package's detokenizer, each with a start of two
characters or more at the end of the text and none of one character (so an answer that tries only
one-character tails holds back nothing there, not one). When at every add() where the package holds
back two characters or more the answer holds back exactly one, on every probe, it names the
mistake. base.py, longest_start.py and growing_stop.py ask it where a start of a stop string was shown.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

# (text, stop strings, the start of one that ends the text after its last token)
PROBES = (
    ("one two three", ["three four"], "three"),
    ("one two", ["two!"], "two"),
    ("one two", ["wo!"], "wo"),
)
HOLD_OF_ONE = (
    "hold back k characters, k the length of the longest start of a stop string that the text ends with, not "
    "the result of the endswith() test: max() over the tests is True, which counts as 1, so exactly one "
    "character was held back; take max() over the k that pass the test"
)


def _held(cls, text: str, stop: list[str]) -> Optional[list[int]]:
    """What the answer held back after each add() where the package holds back 2 characters or more
    (the decoded text less what the answer has shown); None when it raises, returns no str, or shows
    what is not how the text begins (other mistakes, which the cases name)."""
    tok = tokenizer()
    ids = tok.encode(text)
    try:
        mine, ref = cls(tok, list(stop)), reference(tok, list(stop))
        shown, ref_shown, held = "", "", []
        for n, t in enumerate(ids):
            got = mine.add(t)
            if not isinstance(got, str):
                return None
            shown, ref_shown = shown + got, ref_shown + ref.add(t)
            decoded = _full(ids[: n + 1])
            if not decoded.startswith(shown):
                return None
            if len(decoded) - len(ref_shown) >= 2:
                held.append(len(decoded) - len(shown))
    except Exception:
        return None
    return held


def check_hold_of_one(cls) -> None:
    """Raise a Mistake when, on every probe, the answer held back exactly one character at each add()
    where the package holds back a start of two characters or more."""
    if cls is None:
        return
    for text, stop, start in PROBES:
        assert not any(s.startswith(start[-1]) for s in stop), f"setup: {start[-1]!r} may begin no stop string"
        held = _held(cls, text, stop)
        if not held or any(h != 1 for h in held):
            return
    text, stop, start = PROBES[0]
    raise Mistake(
        f"with stop={stop} on {text!r}, after the last token the text ends in {start!r}, the start of "
        f"{stop[0]!r}, and your add() held back only its last character, {start[-1]!r}: {start[:-1]!r} reached "
        "the client. Whenever a stop string could begin, your add() held back exactly one character ("
        + ", ".join(f"{s[-1]!r} of {s!r} for {st}" for _, st, s in PROBES)
        + "), whatever the length of that start: the length held back is the result of the test (True counts "
        "as 1), not k, the length of the longest start that fits",
        HOLD_OF_ONE,
    )
