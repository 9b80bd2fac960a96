"""Exercise 6: an unlock that takes the count off the node it is given only, read when a hand case fails.

lock() adds 1 to the node and to each node above it, below the root; unlock() must take 1 off the
same nodes. An unlock written for the node alone leaves its ancestors counted by a request that has
finished: the shared start of the prefix is never evictable again. The failed check shows only a
symptom (too few pages evictable after the last unlock, which a split that loses the lock or an
unlock that stops early gives too), so `unlock_stays_on_the_node` locks and unlocks the deepest
node of a fresh two-node path and reads lock_ref on the node and its parent after each call.
base.py wraps its hand cases with `named_by_probe` (probe_named.py).
"""

from __future__ import annotations

UNLOCK_STAYS_ON_THE_NODE = (
    "your unlock takes the count off the node it is given only, but lock counted that node and every "
    "node above it: unlock must climb to the root as lock does (node.lock_ref -= 1; node = node.parent, "
    "while node is not the root), or the ancestors stay locked after the request has finished"
)


def unlock_stays_on_the_node(cls) -> str:
    """What unlock() did on a fresh path of two nodes when lock() counted the node and its parent
    but unlock() took the count off the node only; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4, 5, 6], [10, 11, 12])
        cache.insert([1, 2, 7, 7], [10, 20])  # cuts the edge: [1, 2] -> [10], below it [3..6] -> [11, 12]
        node, _ = cache.match_prefix([1, 2, 3, 4, 5, 6])
        parent = node.parent
        before = (node.lock_ref, parent.lock_ref)
        cache.lock(node)
        locked = (node.lock_ref - before[0], parent.lock_ref - before[1])
        cache.unlock(node)
        unlocked = (node.lock_ref - before[0], parent.lock_ref - before[1])
    except Exception:
        return ""
    if parent is cache.root or locked != (1, 1) or unlocked != (0, 1):
        return ""
    return (
        "On a fresh tree, page size 2, with [1, 2, 3, 4, 5, 6] on pages 10, 11, 12 cut by [1, 2, 7, 7] into "
        "[1, 2] -> [10] and [3, 4, 5, 6] -> [11, 12] below it, lock() on the node that match_prefix([1, 2, 3, 4, "
        "5, 6]) returned added 1 to it and to its parent, but unlock() on the same node took 1 off that node "
        "only: its parent kept the count"
    )
