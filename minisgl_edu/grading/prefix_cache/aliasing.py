"""A match whose page list is a list the tree keeps (a node's own `pages`, the root's included).

`match_prefix` returns the pages of the prefix it matched, and the caller owns that list: the
cache manager copies it into the request's row, and any caller may extend it. An answer that
returns a list the tree itself holds (say its walk starts from `pages = self.root.pages` and
appends with `+=`, or it returns `node.pages` as it is) shares that list with the caller: what the
caller, or the next walk, appends to it lands in the tree, and later matches return those pages
too.

`note(cache, pages)` keeps each list `_match` (tree.py) got back, with a copy of it as it was
returned. When a match comes back wrong, `aliased(cache, ids, got, want)` names this mistake only
on evidence of it: the list just returned is the very list a node of the tree holds, or is a list
an earlier match returned whose contents have changed since. Otherwise it names nothing and the
check's own hint stands.
"""

from __future__ import annotations

import weakref
from typing import Any, Optional

from minisgl_edu.grading.core import Mistake

ALIASED = (
    "return a new list: the pages of a match are copied from the nodes (start from an empty list, or "
    "list(node.pages)), never a node's own list (the root's included): what is appended to the returned "
    "list later, by the caller or by your next walk, changes the tree"
)

_RETURNED: "weakref.WeakKeyDictionary[Any, list[tuple[list[int], list[int], list[int]]]]" = weakref.WeakKeyDictionary()


def note(cache: Any, ids: list[int], pages: list[int]) -> None:
    """Keep the list match_prefix(ids) returned and a copy of it as it was then."""
    try:
        kept = _RETURNED.setdefault(cache, [])
    except TypeError:
        return  # a class that cannot be weakly referenced: nothing is kept, nothing is named
    kept.append((list(ids), pages, list(pages)))
    del kept[:-64]


def _owner(cache: Any, pages: list[int]) -> Optional[str]:
    """Which node of the tree holds this very list object as its `pages` (None: none does)."""
    root = getattr(cache, "root", None)
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if getattr(node, "pages", None) is pages:
            if node is root:
                return "the root's own pages list (self.root.pages)"
            return f"the pages list of the node with key {list(getattr(node, 'key', ()))}"
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return None


def aliased(cache: Any, ids: list[int], got: list[int], want: list[int]) -> Optional[Mistake]:
    """The mistake when the wrong list `got` (from match_prefix(ids)) is the tree's own list, or an
    earlier match's list that has changed since it was returned."""
    head = f"match_prefix({ids}) returned pages {got}, expected {want}"
    owner = _owner(cache, got)
    try:
        kept = _RETURNED.get(cache, [])
    except TypeError:
        kept = []
    earlier = [(i, was) for i, lst, was in kept[:-1] if lst is got and was != got]
    if earlier:
        i, was = earlier[-1]
        return Mistake(
            f"{head}. It is the same list object that match_prefix({i}) returned earlier as {was}"
            + (f", and it is {owner}" if owner else "")
            + ": the later walk appended to the list it had handed out, so the pages of both matches are in it",
            ALIASED,
        )
    changed = [(i, was, lst) for i, lst, was in kept[:-1] if lst is not got and lst != was]
    if owner is not None or changed:
        where = (
            f"The list it returned is {owner}"
            if owner
            else f"The list match_prefix({changed[-1][0]}) returned as {changed[-1][1]} is now {changed[-1][2]}"
        )
        return Mistake(
            f"{head}. {where}: a list the tree keeps was handed to the caller, so what is appended to it later "
            "changes the tree",
            ALIASED,
        )
    return None
