"""Exercise 6: a node that insert creates without its parent.

insert hangs a new leaf in its parent's `children`, but a leaf made as `Node(key, pages)` keeps the
default `parent = None`: the tree is out of step, the parent knows the child but the child does not
know its parent. Whatever walks up from that leaf breaks: lock and unlock climb past it into None, a
later split cannot hook its upper part in, evict cannot take the leaf out of its parent's children.
The failed checks show only an AttributeError on None, somewhere far from insert, so
`leaf_without_parent` inserts on a fresh tree and reads `parent` of each node it finds in the
children (base.py wraps the hand cases with it, probe_named.py); the generated phase asks
`orphaned_by`, the reference with that one mistake, through `orphan_hint`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.prefix_cache.raised_alike import raised_alike

LEAF_WITHOUT_PARENT = (
    "a new node must know its parent: set `parent` when insert creates the leaf (Node(key, pages, parent)), "
    "not only put it in the parent's children. lock, unlock, split and evict all walk up through node.parent, "
    "and a leaf whose parent is None while it sits in a parent's children leaves the tree out of step"
)


def leaf_without_parent(cls) -> str:
    """' (...)' saying what insert did when, on a fresh tree, a node it hung in a parent's children has
    another `parent` (None); else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        root = cache.root
        leaves = list(root.children.values())
        if len(leaves) != 1 or list(leaves[0].pages) != [10, 11] or leaves[0].parent is root:
            return ""
        parent = "None" if leaves[0].parent is None else "another node"
    except Exception:
        return ""
    return (
        " (on a fresh tree, page size 2, insert([1, 2, 3, 4], [10, 11]) put the node of pages [10, 11] in the "
        f"root's children, but that node's parent is {parent}, not the root: the new leaf does not know the "
        "node it hangs under)"
    )


@functools.cache
def orphaned_by(reference: Any) -> Any:
    """`reference` whose insert leaves the new leaf's parent at None (still in its parent's children)."""

    def insert(self, ids: list[int], pages: list[int]) -> int:
        before = set(self._nodes())
        k = reference.insert(self, ids, pages)
        for node in self._nodes():
            if node not in before and not node.children:  # the new leaf (a split's upper part has a child)
                node.parent = None
        return k

    return type("Orphaned", (reference,), {"insert": insert})


def orphan_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: LEAF_WITHOUT_PARENT where the answer raised an
    AttributeError where the reference with that mistake does (`play` drives a class through a scene),
    else `hint`'s."""

    def either(scene: Any, diff: Any) -> str:
        made = raised_alike(play, orphaned_by(reference), reference, scene, diff, "AttributeError")
        return LEAF_WITHOUT_PARENT if made else hint(scene, diff)

    return either
