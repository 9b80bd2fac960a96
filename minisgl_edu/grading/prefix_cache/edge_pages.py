"""Exercise 6: the pages a match takes from an edge it ends inside.

A walk that ends inside an edge cuts it and takes the upper part's pages only. An answer that adds
the edge's pages to the match before it cuts (`pages += child.pages` above the split) returns every
page of the edge, those past the match too: a request would read K/V of tokens it does not have. The
tree itself is cut right, so the failed check shows only a match with pages too many, which reads
like a partial-page match. `pages_before_the_split` plays one such match on a fresh tree of the
answer's class and compares what it returned with the pages of the node it returned, read through
the given `Node` (`key`, `pages`).

The base part's hand cases call it from `own_hints` (tree.py), after the split's page cut
(split_pages.py): a split that cuts its pages wrong is named there first. It speaks only when the
node returned is the upper part, holding the right pages, and the list holds the whole edge's.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.split_pages import _CUT, _IDS, _PAGES

PAGES_BEFORE_THE_SPLIT = (
    "take a child's pages after the split, from the node the walk goes on to: when the match ends inside an "
    "edge, cut it first, then add the upper part's pages only. Adding child.pages before the cut adds the "
    "whole edge's pages, those past the match too"
)

# The split probe's tree (six pages of page size 2); the match below shares the edge's first two
# pages, then differs.
_MATCH = _IDS[:_CUT] + [99, 99]


def pages_before_the_split(cls) -> str:
    """' (...)' saying what match_prefix returned when it gave the whole edge's pages for a match
    that ends inside the edge, while the node it returned holds the right ones; else ''."""
    try:
        cache = cls(2)
        cache.insert(list(_IDS), list(_PAGES))
        node, got = cache.match_prefix(list(_MATCH))
        key, held = tuple(getattr(node, "key", ())), list(getattr(node, "pages", []))
        got = list(got)  # here, inside the try: a pair the other way round has a node here
    except Exception:
        return ""
    if got != _PAGES or key != tuple(_IDS[:_CUT]) or held != _PAGES[: _CUT // 2]:
        return ""
    return (
        f" (on a fresh tree, page size 2, with {_IDS} cached on pages {_PAGES}, match_prefix({_MATCH}) returned "
        f"the node {list(key)}, which holds pages {held}, and the pages {got}: the whole edge's pages, "
        "gathered before the edge was cut, not the upper part's)"
    )
