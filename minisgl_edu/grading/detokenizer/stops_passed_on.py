"""Exercise 3, stretch: the stop strings reach the base part.

A StopKeepingDetokenizer that subclasses the student's base part and, with the flag unset, hands over
to the base part's `_release` cuts only at the stop strings the base part was given. An answer that
calls `super().__init__(tokenizer)` and keeps the stop strings in an attribute of its own finds them
with the flag set, but with it unset never cuts at all: the whole text goes out, stop string and all.

The hint "with the flag unset, cut before the stop string" points at the path, not the cause, so
`stops_not_passed_on` confirms this cause on a small input of its own: the student's base class, built
with the stop strings, cuts right; the class with the flag set cuts right too (it holds them); with the
flag unset it gives the whole text, as if it had no stop strings.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

TEXT, STOP = "one two three four five", ["three four"]
CUT = {"base": "one two ", True: "one two three four", False: "one two "}
STOPS_NOT_PASSED = (
    "pass the stop strings on to the base part, super().__init__(tokenizer, stop): with the flag unset your "
    "class hands over to the base part, which cuts only at the stop strings it was given"
)


def _joined(make) -> Optional[str]:
    """The pieces of the object `make()` builds on TEXT, joined; None if it fails or returns no str."""
    try:
        pieces = pieces_of(make(), tokenizer().encode(TEXT))
    except Exception:
        return None
    return "".join(pieces)


def stops_not_passed_on(cls, said: str) -> Optional[Mistake]:
    """The STOPS_NOT_PASSED mistake (its message begins with `said`) when the answer's base class cuts
    right with the stop strings, the answer cuts right with the flag set, and with the flag unset
    gives the whole text; else None (and for cls None: no class to probe)."""
    base = next((c for c in getattr(cls, "__mro__", ())[1:] if c is not object), None)
    if base is None:
        return None
    tok = tokenizer()
    got = {
        "base": _joined(lambda: base(tok, list(STOP))),
        True: _joined(lambda: cls(tok, list(STOP), True)),
        False: _joined(lambda: cls(tok, list(STOP), False)),
    }
    if got["base"] != CUT["base"] or got[True] != CUT[True] or got[False] != TEXT:
        return None
    return Mistake(
        f"{said}. On {TEXT!r} with stop={STOP}: your {base.__name__} alone cuts right, {got['base']!r}, and your "
        f"class with include_stop_str_in_output=True finds the stop string, {got[True]!r}; but with the flag unset "
        f"it gives the whole text, {got[False]!r}, as if there were no stop strings. The stop strings never reached "
        "the base part that the unset flag hands over to",
        STOPS_NOT_PASSED,
    )
