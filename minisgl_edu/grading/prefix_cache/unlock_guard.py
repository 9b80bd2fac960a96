"""Exercise 6: an unlock that tests its guard after the decrement.

The guard against unlocking more often than locking (`if node.lock_ref <= 0: raise`) is about the
count before unlock takes 1 off. Written after the decrement, it fires on the normal last unlock, the
one that takes lock_ref from 1 to 0 and so makes the node evictable: unlock raises there, its parent
and the nodes above keep their lock, and the count of evictable pages is off from then on. The failed
checks show a crash in the answer's own guard, which an unlock of a node whose lock a split lost shows
too, so `guard_after_decrement` plays one lock and one unlock on a fresh path and reads lock_ref on
the node and its parent (base.py wraps the hand cases with it, probe_named.py); the generated phase
asks `guard_after_decrement_by`, the reference with that one mistake, through `guard_hint`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.prefix_cache.raised_alike import raised_alike

GUARD_AFTER_DECREMENT = (
    "a node becomes evictable when its lock_ref drops to 0: that is the last unlock of a request, not an "
    "error. Your unlock takes 1 off lock_ref and only then tests the guard meant for the value before the "
    "decrement, so it refuses that last unlock and stops before the nodes above, and your count of evictable "
    "pages is off after an unlock. Test `lock_ref <= 0` before the decrement (or `< 0` after it)"
)


def guard_after_decrement(cls) -> str:
    """' (...)' saying what unlock() did on a fresh path of two nodes when it raised just as the node's
    lock_ref dropped from 1 to 0, before reaching its parent; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        cache.insert([1, 2, 5, 6], [10, 20])  # [1, 2] -> [10], below it [3, 4] -> [11] and [5, 6] -> [20]
        node, _ = cache.match_prefix([1, 2, 3, 4])
        parent = node.parent
        if parent is cache.root or (node.lock_ref, parent.lock_ref) != (0, 0):
            return ""
        cache.lock(node)
    except Exception:
        return ""
    try:
        cache.unlock(node)
        return ""  # no raise: another mistake, if any
    except Exception as e:
        raised = f"{type(e).__name__}: {e}"
    try:
        if (node.lock_ref, parent.lock_ref) != (0, 1):
            return ""
        evictable = f"num_evictable was {cache.num_evictable} after it, expected 3"
    except Exception:
        return ""
    return (
        " (on a fresh tree, page size 2, [1, 2] -> [10] over [3, 4] -> [11] and [5, 6] -> [20], lock() then "
        f"unlock() on the node that match_prefix([1, 2, 3, 4]) returned: unlock raised {raised} as that node's "
        f"lock_ref dropped from 1 to 0, and its parent kept lock_ref 1; {evictable})"
    )


@functools.cache
def guard_after_decrement_by(reference: Any) -> Any:
    """`reference` whose unlock takes 1 off lock_ref, then raises when it is 0 or less."""

    def unlock(self, node: Any) -> None:
        while node is not self.root:
            node.lock_ref -= 1
            if node.lock_ref <= 0:
                raise ValueError("unlocked more often than locked")
            node = node.parent

    return type("GuardAfterDecrement", (reference,), {"unlock": unlock})


def guard_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: GUARD_AFTER_DECREMENT where the answer raised
    where the reference with that mistake raises (`play` drives a class through a scene), else `hint`'s."""

    def either(scene: Any, diff: Any) -> str:
        made = raised_alike(play, guard_after_decrement_by(reference), reference, scene, diff)
        return GUARD_AFTER_DECREMENT if made else hint(scene, diff)

    return either
