"""Exercise 3, stretch: with the flag unset, a cut before the stop string that ends first.

With include_stop_str_in_output set, the stop string that ENDS first decides the cut
(first_to_end.py); with it unset the class behaves as the base part, which cuts before the stop
string that BEGINS first. An answer that writes one release for both flag values picks the stop
string once, by the smallest end, and only then cuts after it or before it: with the flag unset it
shows the text between the two starts (on 'one two three' with stop ['e two', 'tw'] it gives
'one ', not 'on').

The hint "with the flag unset, cut before the stop string" does not say which one, so
`ends_first_unset` confirms this rule on lists of its own, all completed by one token, where the
stop string that ends first is neither the one that begins first, nor the shortest, nor the one
listed first (in all of them together).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.harness import tokenizer

TEXT = "one two three"  # tokens 'one', ' two', ' three'
# Per list: the base part's answer (before the stop string that begins first), and the cut before
# the one that ends first. ' two' completes both of the first lists, ' three' all three of the last.
LISTS = (
    (["e two", "tw"], "on", "one "),
    (["tw", "e two"], "on", "one "),
    (["ee", "o thr", "two three"], "one ", "one tw"),
)
UNSET_BEGINS_FIRST = (
    "with the flag unset, cut before the stop string that begins first in the text, as the base part does: "
    "the one that ends first decides the cut only with the flag set"
)


def ends_first_unset(cls, said: str) -> Optional[Mistake]:
    """The UNSET_BEGINS_FIRST mistake (its message begins with `said`) when the answer, with the flag
    unset, cuts before the stop string that ends first on every list of LISTS; else None (and for
    cls None: no class to probe)."""
    if cls is None:
        return None
    tok, ids = tokenizer(), tokenizer().encode(TEXT)
    got = []
    for stop, right, ends_first in LISTS:
        pieces = probe_pieces(lambda stop=stop: cls(tok, list(stop), False), ids)
        if pieces is None or "".join(pieces) != ends_first:
            return None
        got.append(f"{ends_first!r} for stop={stop} (expected {right!r})")
    return Mistake(
        f"{said}. With include_stop_str_in_output=False, on {TEXT!r}, your pieces join to " + "; ".join(got) + ". "
        "One token completes all the stop strings of each list, and you cut before the one that ends first "
        "('tw', 'o thr'); the base part cuts before the one that begins first ('e two', 'two three'), so nothing "
        "of it is shown",
        UNSET_BEGINS_FIRST,
    )
