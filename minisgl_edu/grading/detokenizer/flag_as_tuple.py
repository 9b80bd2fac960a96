"""Exercise 3, stretch: the flag stored as it was given, not wrapped in a tuple.

An answer that stores the flag with a trailing comma, `self.include_stop_str_in_output =
include_stop_str_in_output,` (left over from the keyword argument it was copied from), stores a
one-element tuple. Any non-empty tuple is true, so `(False,)` reads as set: without the flag the
class keeps the stop string exactly as with it, and requests with the flag look right.

By its pieces alone it is the answer that ignores the flag (it behaves as with the flag set, always),
so `flag_read_as_set` names it only where the object itself shows the cause: built with the flag
unset, it behaves exactly as built with it set, and one of its attributes holds the tuple (False,).
include_stop.py asks it where, with the flag unset, some of the stop string was shown.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

TEXT, STOP = "one two three four five", ["three four"]
FLAG_AS_TUPLE = (
    "store the flag itself, self.include_stop_str_in_output = include_stop_str_in_output, with no trailing "
    "comma: the comma makes a one-element tuple, (False,), and a non-empty tuple is true, so an unset flag "
    "reads as set"
)


def _wrapped(obj, flag: bool) -> str:
    """The name of an attribute of `obj` that holds the one-element tuple (flag,), or ''."""
    try:
        state = vars(obj)
    except TypeError:
        return ""
    return next((k for k, v in state.items() if isinstance(v, tuple) and len(v) == 1 and v[0] is flag), "")


def flag_read_as_set(cls, said: str) -> Optional[Mistake]:
    """The FLAG_AS_TUPLE mistake (its message begins with `said`) when the answer built with the flag
    unset gives on TEXT the very pieces it gives with the flag set, and holds the flag as (False,);
    else None."""
    if cls is None:
        return None
    ids = tokenizer().encode(TEXT)
    try:
        unset = cls(tokenizer(), list(STOP), False)
        pieces = {False: pieces_of(unset, ids), True: pieces_of(cls(tokenizer(), list(STOP), True), ids)}
    except Exception:
        return None
    attr = _wrapped(unset, False)
    if pieces[False] != pieces[True] or not attr:
        return None
    return Mistake(
        f"{said}. On {TEXT!r} with stop={STOP}, your class built with include_stop_str_in_output=False gives "
        f"{pieces[False]!r}, exactly what it gives with the flag set: it reads the unset flag as set. Its "
        f"`{attr}` holds (False,), a tuple (a trailing comma after the value stored makes one), and a non-empty "
        "tuple is true whatever it holds",
        FLAG_AS_TUPLE,
    )
