"""Where evict(n) stops: as soon as at least n pages are freed. An answer that loops until exactly n
are freed (`len(freed) != n`) goes on past a node that took the count over n, to every unlocked leaf.
`stops_only_at_exactly_n` recognises it on fresh trees of two-page leaves: the base part's hand cases
ask it for any failed check (tree.own_hints), the LFU stretch's where evict freed other pages
(lfu_checks.py), since there the symptom reads as a wrong order; the generated phase asks `exact_n_by`,
the reference with that one mistake.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import named_when_made

STOPS_AT_EXACTLY_N = (
    "stop as soon as at least num_pages are freed (len(freed) >= n, not == n): a node goes whole, so the count "
    "can pass n, and a loop that waits for exactly n goes on freeing every unlocked leaf"
)


def stops_only_at_exactly_n(cls) -> str:
    """' (...)' saying what evict(n) freed on the probe's trees when it stops only where the count of freed
    pages reaches n exactly: evict(2) frees one 2-page leaf, evict(1) all of them; else ''."""
    try:
        got = {}
        for n in (2, 1):
            cache = cls(2)  # page size 2
            for k in range(1, 4):  # three leaves of two pages, [k, k, k, k] on pages 20 + 2k, 21 + 2k
                cache.insert([k] * 4, [20 + 2 * k, 21 + 2 * k])
            got[n] = len(cache.evict(n))
    except Exception:
        return ""
    if got != {2: 2, 1: 6}:
        return ""
    return (
        " (on 3 cached leaves of 2 pages each, evict(2) freed one leaf, 2 pages, but evict(1) freed all 6: once "
        "the first leaf took the count past 1, your loop never saw it equal to 1)"
    )


@functools.cache
def exact_n_by(reference: Any) -> Any:
    """`reference` whose evict(n) frees nodes, one at a time in its order, until exactly n pages are freed."""

    def evict(self, num_pages: int) -> list[int]:
        freed: list[int] = []
        while len(freed) != num_pages:
            got = reference.evict(self, 1)  # one node, the first in the reference's order
            if not got:
                break
            freed += got
        return freed

    return type("StopsAtExactlyN", (reference,), {"evict": evict})


def exact_n_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what evict returned: STOPS_AT_EXACTLY_N where the answer gives what
    the reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    return named_when_made(STOPS_AT_EXACTLY_N, play, exact_n_by(reference), reference, hint)
