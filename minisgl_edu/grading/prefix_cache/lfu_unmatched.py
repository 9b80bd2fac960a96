"""Exercise 6's LFU stretch: a KeyError named when its cause is a leaf no match has reached yet
(lfu.py wraps its hand-written cases with `named_by_probe`, probe_named.py).

An answer that keeps its hit counts in a dict and reads them as `hits[node]` has no entry for a leaf
that insert added and no match has counted: evict raises KeyError as soon as such a leaf is a
candidate. A KeyError alone has other causes too (an entry dropped too early, two structures out of
step), so the cause is confirmed on two small trees of its own: one page inserted and evicted fails,
the same page matched once before the evict does not.
"""

from __future__ import annotations

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


def no_count_for_unmatched(cls, page_size: int = 2) -> str:
    """What evict did when it raised KeyError on a leaf that was only inserted, and not once that leaf
    had been matched; else ''."""
    try:
        if not _evicts(cls, page_size, matched=False) or _evicts(cls, page_size, matched=True):
            return ""
    except Exception:
        return ""
    return (
        "A leaf that was inserted and never matched makes evict raise KeyError (one page inserted, then "
        "evict(1)); matched once first, it is evicted"
    )
