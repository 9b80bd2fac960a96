"""An insert of a sequence that is cached already hangs a new leaf all the same: one with an empty key
(filed under ()) and no pages. Pages and counts stay right, so no match, count or evict shows it; the
tree does: the node where the sequence ends is no longer a leaf, and evict must free the empty leaf
before that node's pages become a candidate. `check_no_empty_node` looks at the nodes the tree lists
(`nodes()`, given code that the cache manager reads) after such an insert.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

EMPTY_LEAF = (
    "every node but the root holds at least one page (the contract's tree), so an insert whose tokens are all "
    "cached already adds no leaf: hang a new leaf only when tokens are left over past the cached prefix "
    "(at < len(key)). A leaf with an empty key and no pages holds nothing, and it keeps the node above it from "
    "being a leaf, so evict reaches that node's pages only after it"
)


def check_no_empty_node(cache, after: str) -> None:
    """Raise a Mistake naming the empty leaf when some node of the tree has an empty key."""
    nodes = getattr(cache, "nodes", None)
    if not callable(nodes):
        return  # the given nodes() was removed: other checks speak for the tree
    empty = [n for n in nodes() if not tuple(getattr(n, "key", (1,)))]
    if empty:
        pages = [list(getattr(n, "pages", [])) for n in empty]
        raise Mistake(
            f"after {after}, the tree holds {len(empty)} node(s) with an empty key (pages {pages}): the insert "
            "added a node though every token it was given was cached already",
            EMPTY_LEAF,
        )
