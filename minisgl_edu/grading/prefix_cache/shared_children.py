"""Exercise 6: a split whose upper part shares the cut node's children dict.

A split that builds its upper part as a shallow copy of the node (`copy.copy(node)`, to keep its
parent, lock and last use) gets the node's `children` dict itself, not a dict of its own: filing the
lower part under the upper part files it under itself too. The tree then has a cycle, and every walk
below the split (the given `nodes()`, so `num_cached`, `num_evictable` and evict) never ends: all the
student sees is a time-out in `nodes()`, which says nothing about the split.

`check_parent_links` (links.py) looks, after each match_prefix or insert of the hand cases, for a node
that hangs in its own children (a walk that visits each node once); base.py wraps the hand cases that
still run out of time (probe_named.py). Both name the mistake only when `children_shared` confirms it:
one split on a fresh tree of the answer's class, under a short time limit of its own (the probe runs
the answer's code, which may loop), whose lower part is its own child. A class that keeps its tree
some other way is not looked at.
"""

from __future__ import annotations

from minisgl_edu.grading.limits import CaseTimeout, time_limit
from minisgl_edu.grading.prefix_cache.split_children import child_by_key

SHARED_CHILDREN = (
    "a split's upper part needs a children dict of its own: copy.copy(node) is a shallow copy, so the "
    "copy shares the node's children dict, and hanging the lower part under the upper part hangs it "
    "under itself too (a cycle: every walk below it never ends). Build the upper part as a new Node, or "
    "give the copy a fresh dict (upper.children = {}) before filing the lower part in it"
)

_SEQ, _PAGES = [1, 2, 3, 4, 5, 6], [10, 11, 12]
_CUT = [1, 2, 9, 9]  # matches the first page only: cuts the edge [1..6] after (1, 2)
_SECONDS = 1.0  # far above what one insert and one match need; the probe never waits longer


def children_shared(cls) -> str:
    """What one split on a fresh tree of the answer's class did, when it left the lower part in its own
    children; else ''. Only the dicts are read afterwards, never walked, so the probe cannot loop."""
    try:
        with time_limit(_SECONDS):  # a time-out is a BaseException: caught below with the rest
            cache = cls(2)
            cache.insert(list(_SEQ), list(_PAGES))
            cache.match_prefix(list(_CUT))
    except (Exception, CaseTimeout):
        return ""
    upper = child_by_key(getattr(cache, "root", None), [1, 2])
    lower = child_by_key(upper, [3, 4, 5, 6]) if upper is not None else None
    if lower is None or child_by_key(lower, [3, 4, 5, 6]) is not lower:
        return ""
    shared = (
        "share one children dict" if upper.children is lower.children else "both hold the lower part in their children"
    )
    return (
        f"On a fresh tree, insert({_SEQ}, {_PAGES}) and then match_prefix({_CUT}) cut the edge {_SEQ} after "
        f"[1, 2]: your split's upper part [1, 2] and lower part [3, 4, 5, 6] {shared}, so the lower part is a "
        "child of itself and every walk below it, nodes() too, goes round forever"
    )
