"""Exercise 6: the tree's parent pointers, read after each match_prefix or insert of the hand cases.

lock, unlock and evict climb the tree by the given `Node`'s `parent`: a node that hangs in one node's
`children` but names another as its parent is climbed past the node that holds it. The usual cause is
a split that hangs the lower part under the new upper node and leaves its `parent` on the node above.
`check_parent_links` names that before lock or evict walks the tree (evict then deletes the lower part
from the wrong `children` dict and raises KeyError, which says nothing about the pointer). It only
speaks when the answer's own `lock` on a copy of the tree confirms it: lock(child) leaves the holder's
`lock_ref` unchanged. A class that keeps its tree some other way (no `children` dict, no `parent`, or
`parent` left None) is not looked at.

The walk visits each node once, so a tree with a cycle does not hang the grader: a node that hangs in
its own children is named when shared_children.py's probe confirms a split that shares one children
dict between its two parts (before the answer's own `nodes()` walks into the cycle and runs out of time).
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.prefix_cache.shared_children import SHARED_CHILDREN, children_shared

PARENT_NOT_SET = (
    "when split hangs the lower part in the new upper node's children, set the lower part's parent to "
    "that upper node too (node.parent = upper): lock, unlock and evict climb the tree by parent, and a "
    "lower part that still points at the node above skips the upper part"
)


def _links(cache: Any) -> list[tuple[Any, Any]]:
    """Every (holder, child) where `child` is in `holder.children`, from the root down; each node is
    walked once, so a cycle ends the walk instead of looping."""
    out, seen, stack = [], set(), [getattr(cache, "root", None)]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if id(node) in seen or not isinstance(children, dict):
            continue
        seen.add(id(node))
        out += [(node, child) for child in children.values()]
        stack.extend(children.values())
    return out


def _stale_link(cache: Any) -> Optional[tuple[Any, Any]]:
    """The first (holder, child) where `child.parent` is another node than `holder` (not None); the
    root as holder is skipped (lock never counts on the root)."""
    root = getattr(cache, "root", None)
    for node, child in _links(cache):
        parent = getattr(child, "parent", None)
        if node is not root and parent is not None and parent is not node:
            return node, child
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
    """Raise the shared-children mistake when a node hangs in its own children and the probe confirms
    it, or the parent-pointer mistake when a child's `parent` is not the node that holds it and the
    answer's lock climbs past that node."""
    root = getattr(cache, "root", None)
    looped = next((child for holder, child in _links(cache) if child is holder), None)
    if looped is not None:  # the answer's nodes() would never return: named only when a split does it
        seen = children_shared(type(cache))
        if seen:
            raise Mistake(f"after {call}, {_says(looped, root)} hangs in its own children. {seen}", SHARED_CHILDREN)
    found = _stale_link(cache)
    if found is None or not _lock_skips(cache, *found):
        return
    holder, child = found
    raise Mistake(
        f"after {call}, {_says(child, root)} hangs in the children of {_says(holder, root)}, but its parent is "
        f"{_says(child.parent, root)}: lock() on it went past {_says(holder, root)} (its lock_ref did not "
        "change), and evict would delete it from the wrong children dict",
        PARENT_NOT_SET,
    )
