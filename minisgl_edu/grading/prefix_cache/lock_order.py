"""Exercise 6: a lock loop that steps to the parent before it counts, read when a hand case fails.

lock() must add 1 to the node it is given and to each node above it, below the root. A loop written
"step up, then count" (`node = node.parent; node.lock_ref += 1` while node is not the root) counts
every node one place too high: the node locked gets nothing and the root gets 1. The failed check
shows only a symptom (pages of a locked match still evictable, or the root's lock_ref at 2, which
other mistakes give too), so `lock_moves_up_first` locks the deepest node of a fresh two-node path
and reads lock_ref on the node, its parent and the root. base.py wraps its hand cases with
`named_by_probe` (probe_named.py).
"""

from __future__ import annotations

LOCK_MOVES_UP_FIRST = (
    "your lock loop steps to the parent before it counts, so it counts one node too high: the node "
    "locked gets no count and the root gets one. Count on the node first, then step up "
    "(node.lock_ref += 1; node = node.parent, while node is not the root), and unlock the same way"
)


def lock_moves_up_first(cls) -> str:
    """What lock() did on a fresh path of two nodes when it counted the parent and the
    root instead of the node and the parent; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4, 5, 6], [10, 11, 12])
        cache.insert([1, 2, 7, 7], [10, 20])  # cuts the edge: [1, 2] -> [10], below it [3..6] -> [11, 12]
        node, _ = cache.match_prefix([1, 2, 3, 4, 5, 6])
        cache.lock(node)
        got = (node.lock_ref, node.parent.lock_ref, cache.root.lock_ref)
    except Exception:
        return ""
    if got != (0, 1, 2):
        return ""
    return (
        "On a fresh tree, page size 2, with [1, 2, 3, 4, 5, 6] on pages 10, 11, 12 cut by [1, 2, 7, 7] into "
        "[1, 2] -> [10] and [3, 4, 5, 6] -> [11, 12] below it, lock() on the node that match_prefix([1, 2, 3, 4, 5, 6]) "
        "returned left its lock_ref at 0, gave its parent 1 and the root 2: each count landed one node "
        "above where it belongs"
    )
