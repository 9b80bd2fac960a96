"""Exercise 6: a walk that compares a child's edge with the start of the sequence, read when a hand
case of the base part ran out of time (base.py wraps its hand cases with `named_by_probe`,
probe_named.py).

Below the root the walk has matched `at` tokens already, so the edge's page at n is compared with
`key[at + n : at + n + page_size]`. Written `key[n : n + page_size]`, the offset is lost: one level
down the child's pages are compared with the start of the sequence. A child whose first page differs
from the sequence's first page then matches nothing (n = 0), and a walk that cuts the edge there
makes an empty upper part and finds the same child again, forever; all the student sees is a
time-out. A loop alone has other causes, so the cause is confirmed on fresh trees, under a short time
limit of their own (the probes run the answer's code, which may loop): a sequence whose pages repeat
its first page matches one page too many, and a sequence below a cached prefix whose own pages
differ from it is not matched (or never finishes).
"""

from __future__ import annotations

from minisgl_edu.grading.limits import CaseTimeout, time_limit

EDGE_FROM_THE_START = (
    "below the root the walk has matched `at` tokens already: compare the child's page at n with "
    "key[at + n : at + n + page_size], not with key[n : n + page_size], which is the start of the sequence. "
    "Without the offset a child is compared with the sequence's first pages: it matches what it should not, "
    "and where it matches nothing the edge is cut at 0 again and again"
)

_SECONDS = 1.0  # far above what two inserts and a match need; the probe never waits longer


def _too_many(cls) -> bool:
    """[1, 2] -> [10] with a leaf [1, 2, 1, 2] -> [11, 12] below it: matching [1, 2, 1, 2, 7, 7] must
    give [10, 11]; compared with the start of the sequence, the leaf's page [1, 2] matches [1, 2]
    instead of [7, 7], and the match returns [10, 11, 12]."""
    cache = cls(2)
    cache.insert([1, 2], [10])
    cache.insert([1, 2, 1, 2, 1, 2], [10, 11, 12])
    return cache.match_prefix([1, 2, 1, 2, 7, 7])[1] == [10, 11, 12]


def _too_few(cls) -> bool:
    """[1, 2, 3, 4] and [1, 2, 5, 6] cached: matching [1, 2, 3, 4, 9, 9] must give [10, 11]; the child
    [3, 4] compared with [1, 2] matches nothing, and the walk stops at [10] or cuts at 0 forever."""
    cache = cls(2)
    cache.insert([1, 2, 3, 4], [10, 11])
    cache.insert([1, 2, 5, 6], [10, 12])
    return cache.match_prefix([1, 2, 3, 4, 9, 9])[1] == [10]


def edge_from_the_start(cls) -> str:
    """What two matches on fresh trees did when the walk compared a child's edge with the start of the
    sequence; else ''."""
    try:
        with time_limit(_SECONDS):  # a time-out is a BaseException: caught below with the rest
            if not _too_many(cls):
                return ""
    except (Exception, CaseTimeout):
        return ""
    try:
        with time_limit(_SECONDS):  # one limit at a time: a nested timer would cut the outer one short
            if not _too_few(cls):
                return ""
    except CaseTimeout:
        pass  # the edge cut at 0 again and again: the loop this mistake makes
    except Exception:
        return ""
    return (
        "On a fresh tree, page size 2, [1, 2] -> [10] with a leaf [1, 2, 1, 2] -> [11, 12] below it, "
        "match_prefix([1, 2, 1, 2, 7, 7]) returned [10, 11, 12] (the leaf's second page [1, 2] was compared "
        "with the sequence's [1, 2] at its start, not with [7, 7]); and with [1, 2, 3, 4] and [1, 2, 5, 6] "
        "cached, match_prefix([1, 2, 3, 4, 9, 9]) did not find [3, 4] below [1, 2] (the child was compared "
        "with [1, 2])"
    )
