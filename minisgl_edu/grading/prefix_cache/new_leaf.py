"""A node that insert creates starts locked: its lock_ref is copied from the node it hangs under (or set
to anything but 0), though no lock() call has reached it. Such a node never becomes evictable, so after
every request has finished some cached pages are still locked, which also looks like an unlock that did
not undo its lock. `new_leaf_locked` tells the two apart on a small tree of its own: it inserts a prompt,
locks the node a match returns, inserts a longer prompt under it, and names this mistake only when the
new leaf's lock_ref is not 0 right after that insert (before any unlock could be to blame).
"""

from __future__ import annotations

from typing import Optional


def new_leaf_locked(cls, page_size: int) -> Optional[str]:
    """The hint that names a new leaf born locked, when a fresh `cls(page_size)` shows it; else None."""
    try:
        cache = cls(page_size)
        first = [1] * page_size
        cache.insert(first, [10])
        node, _ = cache.match_prefix(first)
        cache.lock(node)
        cache.insert(first + [2] * page_size, [10, 11])
        leaves = [c for c in node.children.values() if list(c.pages) == [11]]
        if len(leaves) != 1 or leaves[0].lock_ref == 0:
            return None
        return (
            f"a node that insert creates starts with lock_ref 0: the leaf inserted under a locked node came back "
            f"with lock_ref {leaves[0].lock_ref}, though no lock() reached it, so it can never be evicted. Only "
            "lock() adds to lock_ref (on the locked node and its ancestors); a new leaf does not inherit its "
            "parent's"
        )
    except Exception:
        return None
