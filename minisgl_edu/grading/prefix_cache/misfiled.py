"""A child filed in its parent's `children` under a key no walk asks for: exercise 6's shared check
(tree.py's `_expect_pages` calls `misfiled_hint` when a match comes back short).

Two mistakes leave the same tree: a child filed under its parent's own first page. Split may file the
lower part under the first page its key had before the cut (the upper part's), and insert may file the
new leaf under the first page of the whole sequence (the same page when the leaf hangs below a split).
The tree alone cannot tell them apart, so each is confirmed on a small tree of its own: a leaf inserted
below a whole cached edge (no split anywhere) names insert; an edge cut by a shorter insert names split.
"""

from __future__ import annotations

from typing import Optional

LOWER_KEYED_BY_OLD_PAGE = (
    "split files the lower part in the upper node's children under the first page of its key as it is "
    "after the cut (node.key[n:n + page_size]), not as it was before: before the cut its first page is the "
    "upper part's first page, and a later walk looking for the lower part's own first page never finds it"
)
LEAF_KEYED_BY_SEQUENCE = (
    "insert files the new leaf in its parent's children under the first page of the leaf's own key (the "
    "tokens past the cached prefix), not under the first page of the whole sequence: the two differ as soon "
    "as the leaf hangs below a cached prefix, and a walk looks a child up by its own first page"
)


def _misfiled(cache) -> Optional[tuple[tuple, tuple]]:
    """A child filed under its parent's own first page, not its own (the given `Node`'s `children`
    dict): (the key it is filed under, the first page of its key). None when every child is where a
    walk looks for it, or the class keeps its tree some other way."""
    ps = getattr(cache, "page_size", 2)
    stack = [getattr(cache, "root", None)]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if not isinstance(children, dict):
            continue
        own = tuple(getattr(node, "key", ()) or ())[:ps]
        for filed, child in children.items():
            first = tuple(getattr(child, "key", ()) or ())[:ps]
            if own and filed == own and first != own:
                return filed, first
            stack.append(child)
    return None


def _filed_under(cache, pages: list[int]) -> Optional[tuple]:
    """The key under which the node holding exactly `pages` is filed in its parent's children."""
    stack = [getattr(cache, "root", None)]
    while stack:
        children = getattr(stack.pop(), "children", None)
        if not isinstance(children, dict):
            continue
        for filed, child in children.items():
            if list(getattr(child, "pages", ())) == pages:
                return tuple(filed)
            stack.append(child)
    return None


def _new_leaf_misfiled(cls, ps: int) -> bool:
    """One page cached, then a second page inserted below it: no edge is cut, so only insert files
    the new leaf. Filed under the first page of the sequence, not its own?"""
    try:
        cache = cls(ps)
        cache.insert([1] * ps, [10])
        cache.insert([1] * ps + [2] * ps, [10, 11])
        return _filed_under(cache, [11]) == (1,) * ps
    except Exception:
        return False


def _lower_part_misfiled(cls, ps: int) -> bool:
    """Two pages cached as one edge, then a sequence that shares only the first: the edge is cut, and
    its lower part (page 11) is filed under the upper part's first page, not its own?"""
    try:
        cache = cls(ps)
        cache.insert([1] * ps + [2] * ps, [10, 11])
        cache.insert([1] * ps + [3] * ps, [10, 12])
        return _filed_under(cache, [11]) == (1,) * ps
    except Exception:
        return False


def misfiled_hint(cache) -> Optional[tuple[str, str]]:
    """When `cache` holds a child filed under its parent's own first page and a probe of its class
    confirms which call filed it: (what the message says, the hint). Else None."""
    found = _misfiled(cache)
    if found is None:
        return None
    filed, first = found
    where = f"A node whose key begins with {list(first)} hangs in its parent's children under {list(filed)}"
    ps = getattr(cache, "page_size", 2)
    if _new_leaf_misfiled(type(cache), ps):
        return (
            f"{where}: insert filed the new leaf under the first page of the whole sequence, where no walk looks",
            LEAF_KEYED_BY_SEQUENCE,
        )
    if _lower_part_misfiled(type(cache), ps):
        return (
            f"{where}, the parent's own first page: a split filed the lower part under the first page its key had "
            "before the cut, where no walk looks",
            LOWER_KEYED_BY_OLD_PAGE,
        )
    return None
