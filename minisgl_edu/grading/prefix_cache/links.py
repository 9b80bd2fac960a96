"""Exercise 6: the tree's parent pointers, read after each match_prefix or insert of the hand cases.

lock, unlock and evict climb the tree by the given `Node`'s `parent`: a node that hangs in one node's
`children` but names another as its parent is climbed past the node that holds it. The usual cause is
a split that hangs the lower part under the new upper node and leaves its `parent` on the node above.
`check_parent_links` names that before lock or evict walks the tree (evict then deletes the lower part
from the wrong `children` dict and raises KeyError, which says nothing about the pointer). It only
speaks when the answer's own `lock` on a copy of the tree confirms it: lock(child) leaves the holder's
`lock_ref` unchanged. A class that keeps its tree some other way (no `children` dict, no `parent`, or
`parent` left None) is not looked at.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from minisgl_edu.grading.core import Mistake

PARENT_NOT_SET = (
    "when split hangs the lower part in the new upper node's children, set the lower part's parent to "
    "that upper node too (node.parent = upper): lock, unlock and evict climb the tree by parent, and a "
    "lower part that still points at the node above skips the upper part"
)


def _stale_link(cache: Any) -> Optional[tuple[Any, Any]]:
    """The first (holder, child) where `child` is in `holder.children` but `child.parent` is another
    node (not None); the root as holder is skipped (lock never counts on the root)."""
    root = getattr(cache, "root", None)
    stack = [root]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if not isinstance(children, dict):
            continue
        for child in children.values():
            parent = getattr(child, "parent", None)
            if node is not root and parent is not None and parent is not node:
                return node, child
            stack.append(child)
    return None


def _lock_skips(cache: Any, holder: Any, child: Any) -> bool:
    """On a copy of the tree, the answer's lock(child) leaves holder's lock_ref as it was."""
    try:
        twin, held, below = copy.deepcopy((cache, holder, child))
        before = held.lock_ref
        twin.lock(below)
        return isinstance(before, int) and held.lock_ref == before
    except Exception:
        return False


def _says(node: Any, root: Any) -> str:
    if node is root:
        return "the root"
    pages = ", ".join(str(p) for p in getattr(node, "pages", []))
    return f"the node {list(getattr(node, 'key', ()))} (pages {pages})"


def check_parent_links(cache: Any, call: str) -> None:
    """Raise the parent-pointer mistake when a child's `parent` is not the node that holds it and the
    answer's lock climbs past that node."""
    found = _stale_link(cache)
    if found is None or not _lock_skips(cache, *found):
        return
    holder, child = found
    root = getattr(cache, "root", None)
    raise Mistake(
        f"after {call}, {_says(child, root)} hangs in the children of {_says(holder, root)}, but its parent is "
        f"{_says(child.parent, root)}: lock() on it went past {_says(holder, root)} (its lock_ref did not "
        "change), and evict would delete it from the wrong children dict",
        PARENT_NOT_SET,
    )
