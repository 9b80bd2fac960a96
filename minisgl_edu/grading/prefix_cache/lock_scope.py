"""What a lock protects: the locked node and its ancestors (the path to the root), never the nodes
below it. `check_leaves_under_a_lock` reads the tree after an evict(n) that freed fewer than n pages:
when an unlocked leaf stayed and a node above it is locked, while no leaf is locked at all, the answer
treats a lock as protecting the subtree below the locked node, and the check names that mistake.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

LOCK_SCOPE = (
    "a lock protects the locked node and its ancestors (the path to the root), not the nodes below it: "
    "a leaf under a locked node is still evictable when its own lock_ref is 0; test each candidate's "
    "own lock_ref only"
)


def _locked_above(node) -> bool:
    up = getattr(node, "parent", None)
    while up is not None:
        if getattr(up, "lock_ref", 0) > 0 and getattr(up, "parent", None) is not None:
            return True
        up = getattr(up, "parent", None)
    return False


def check_leaves_under_a_lock(cache, n: int, freed) -> None:
    """Raise the lock-scope mistake when evict(n) stopped short of n pages, left an unlocked leaf
    whose ancestor is locked, and no leaf of the tree is locked (so no locked leaf stopped it)."""
    try:
        if not isinstance(freed, list) or len(freed) >= n:
            return
        leaves = [x for x in cache.nodes() if not x.children]
        if any(x.lock_ref > 0 for x in leaves):
            return
        kept = sorted(p for x in leaves if x.lock_ref == 0 and _locked_above(x) for p in x.pages)
    except Exception:
        return
    if kept:
        raise Mistake(
            f"evict({n}) freed {sorted(freed)} and kept page(s) {kept}, though their node is a leaf with "
            "lock_ref 0: only a node above it is locked",
            LOCK_SCOPE,
        )
