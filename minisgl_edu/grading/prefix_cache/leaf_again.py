"""Exercise 6: an evict that pushes the leaf it just evicted back onto its heap, read when the
answer's code raised KeyError in a hand case (base.py and lfu.py wrap their hand cases with
`named_by_probe`, probe_named.py).

When a leaf's eviction leaves its parent childless and unlocked, the parent joins the candidates.
Pushing `node` (the leaf just evicted) there instead of `parent` is a slip of the loop variable: the
parent never becomes a candidate, and the leaf comes off the heap a second time, where unhooking it
from its parent raises KeyError. A KeyError alone has other causes, so the cause is confirmed on a
fresh tree of its own: a parent with two leaves, whose first leaf is evicted fine (the parent keeps a
child), while the call that frees the second one, and should go on to the parent, raises KeyError
with the key of that second leaf, leaving the parent in the tree. `evict_key_error`, which reads the
key of such a KeyError, serves unhook_key.py's probe too.
"""

from __future__ import annotations

from typing import Optional

LEAF_PUSHED_AGAIN = (
    "when a leaf's eviction leaves its parent childless and unlocked, push the parent onto the heap, not "
    "the leaf just evicted: pushing `node` instead of `parent` takes the same leaf off the heap again, and "
    "unhooking it a second time raises KeyError, while the parent never becomes a candidate"
)


def evict_key_error(cache, n: int) -> Optional[tuple]:
    """The key, as a tuple, of the KeyError that cache.evict(n) raised; None when it raised none, or
    one whose key is not a tuple or a list. Any other exception goes to the caller."""
    try:
        cache.evict(n)
    except KeyError as e:
        key = e.args[0] if e.args else None
        return tuple(key) if isinstance(key, (tuple, list)) else None
    return None


def leaf_pushed_again(cls) -> str:
    """What evict did on a fresh tree when it took the leaf it had just evicted off
    its heap again, in place of the parent that leaf left childless; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        cache.insert([1, 2, 5, 5], [10, 20])  # [1, 2] -> [10], leaves [3, 4] -> [11] and [5, 5] -> [20]
        first = sorted(cache.evict(1))
        if first not in ([11], [20]):
            return ""
        second = (5, 5) if first == [11] else (3, 4)
        if evict_key_error(cache, 2) != second or sorted(cache.cached_pages()) != [10]:
            return ""
    except Exception:
        return ""
    return (
        f"On a fresh tree, page size 2, [1, 2] -> [10] with two leaves [3, 4] -> [11] and [5, 5] -> [20], "
        f"evict(1) freed {first} (its parent kept a child); then evict(2) raised KeyError: {second}, the key of the "
        "leaf it had just evicted, and page 10, their parent's, stayed cached: that leaf came off the heap twice"
    )
