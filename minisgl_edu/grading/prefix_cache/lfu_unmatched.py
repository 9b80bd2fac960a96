"""Exercise 6's LFU stretch: a KeyError named when its cause is a leaf no match has reached yet
(lfu.py wraps its hand-written cases with `unmatched_named`).

An answer that keeps its hit counts in a dict and reads them as `hits[node]` has no entry for a leaf
that insert added and no match has counted: evict raises KeyError as soon as such a leaf is a
candidate. A KeyError alone has other causes too (an entry dropped too early, two structures out of
step), so the cause is confirmed on two small trees of its own: one page inserted and evicted fails,
the same page matched once before the evict does not.
"""

from __future__ import annotations

import dataclasses
import functools

from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.feedback import explain

NO_COUNT_YET = (
    "a leaf that no match has reached yet has 0 hits, and it has no entry in your hit counts until a match "
    "adds one: read a count with a default, hits.get(node, 0), or give a node its entry when it is made"
)


def _evicts(cls, page_size: int, matched: bool) -> bool:
    """One page inserted (and matched once if `matched`), then evict(1): True if it raised KeyError."""
    cache = cls(page_size)
    ids = [1] * page_size
    cache.insert(list(ids), [10])
    if matched:
        cache.match_prefix(list(ids))
    try:
        cache.evict(1)
    except KeyError:
        return True
    return False


def no_count_for_unmatched(cls, page_size: int = 2) -> bool:
    """evict raises KeyError on a leaf that was only inserted, and not once it has been matched."""
    try:
        return _evicts(cls, page_size, matched=False) and not _evicts(cls, page_size, matched=True)
    except Exception:
        return False


def _unmatched_first(run):
    """`run`, with a KeyError named as a never-matched leaf's missing count when the probe confirms it."""

    @functools.wraps(run)
    def case(cls):
        try:
            run(cls)
        except KeyError as e:
            if not no_count_for_unmatched(cls):
                raise
            said = explain(e).message
            raise Mistake(
                f"{said}. A leaf that was inserted and never matched makes evict raise KeyError (one page "
                "inserted, then evict(1)); matched once first, it is evicted",
                NO_COUNT_YET,
            ) from None

    return case


def unmatched_named(cases: list[Case]) -> list[Case]:
    """The hand-written cases of `cases` with `_unmatched_first` around each."""
    return [c if c.generated else dataclasses.replace(c, run=_unmatched_first(c.run)) for c in cases]
