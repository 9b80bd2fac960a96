"""Exercise 6: a match_prefix that locks what it matched, read when a hand case fails.

match_prefix only finds the prefix; the cache manager locks the node itself (`lock(handle)` right
after the match) and unlocks it once when the request ends. An answer whose match_prefix also calls
lock leaves one count behind per match: a prefix ever matched is never evictable again. The failed
check shows only a symptom (pages still locked after the last unlock, which a split that loses the
lock or an unlock that stops early gives too), so `match_locks` matches a fresh tree's one edge,
with no lock call, and reads lock_ref on the node it returned. base.py wraps its hand cases with
`named_by_probe` (probe_named.py).
"""

from __future__ import annotations

MATCH_LOCKS = (
    "your match_prefix locks the node it returns, but the cache manager calls lock(node) itself after the "
    "match and unlock(node) once when the request ends: the count match_prefix adds is never taken off. "
    "match_prefix only finds the prefix (and cuts an edge); leave lock_ref to lock and unlock"
)


def match_locks(cls) -> str:
    """What match_prefix did to lock_ref on a fresh tree when it locked its match itself; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        before = cache.num_evictable
        node, pages = cache.match_prefix([1, 2, 3, 4])
        got = (node.lock_ref, cache.num_evictable)
        if before != 2 or list(pages) != [10, 11] or got[0] < 1:
            return ""
    except Exception:
        return ""
    return (
        f"On a fresh tree, page size 2, with [1, 2, 3, 4] cached on pages 10, 11 and unlocked, match_prefix([1, 2, "
        f"3, 4]) alone, with no lock() call, left the node it returned with lock_ref {got[0]} (num_evictable "
        f"went from 2 to {got[1]}): the match locked it"
    )
