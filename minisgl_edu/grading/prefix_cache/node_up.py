"""The order of the pages match_prefix returns: root to node, as the tokens run. An answer that gathers
them walking up from the node where the match ends (`pages += up.pages` up to the root) lists the nodes
from the deepest up: right only while the match spans a single node, and out of order as soon as a split
or an insert on a cached prefix puts it over several, so a request reads its prefix's K/V from the wrong
pages. `gathered_up` recognises it on a fresh tree of three nodes on one path (the base part's hand cases
ask it for any failed check, tree.own_hints); the generated phase asks `gathered_up_by`, the reference
with that one mistake, through `match_hint`, which goes on to whole_cut.cuts_hint when it is not that
(and then to kept_state.kept_hint).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import made_by
from minisgl_edu.grading.prefix_cache.kept_state import kept_hint
from minisgl_edu.grading.prefix_cache.whole_cut import cuts_hint

PAGES_GATHERED_UP = (
    "match_prefix returns the path's pages root to node, in the order of the tokens: collect them on the way "
    "down, or reverse the list of nodes before you join their pages if you walk up from the node, since "
    "walking up meets the deepest node first"
)

# [1..8] on pages 10..13, then two inserts that cut its edge after 6 tokens and after 2: nodes
# [1, 2] -> [10], [3, 4, 5, 6] -> [11, 12], [7, 8] -> [13] on one path
LONG = [1, 2, 3, 4, 5, 6, 7, 8]
GATHERED_UP = [13, 11, 12, 10]  # the nodes deepest first, each node's own pages in order


def gathered_up(cls) -> str:
    """' (...)' saying what match_prefix returned for a path of three nodes when it listed their pages
    from the deepest node up, [13, 11, 12, 10] for [10, 11, 12, 13]; else ''. Only pages listed node by
    node, deepest first, give that: not pages reversed one by one ([13, 12, 11, 10]) nor a wrong tree."""
    try:
        cache = cls(2)
        cache.insert(list(LONG), [10, 11, 12, 13])
        cache.insert([1, 2, 3, 4, 5, 6, 9, 9], [10, 11, 12, 20])  # cuts [1..8] after 6 tokens
        cache.insert([1, 2, 7, 7], [10, 30])  # and [1..6] after 2
        got = list(cache.match_prefix(list(LONG))[1])
    except Exception:
        return ""
    if got != GATHERED_UP:
        return ""
    return (
        " (on a fresh tree, page size 2, [1, 2, 3, 4, 5, 6, 7, 8] cached on pages 10..13 then cut by two inserts "
        "into the nodes [1, 2] -> [10], [3, 4, 5, 6] -> [11, 12] and [7, 8] -> [13], match_prefix of its 8 ids "
        "returned [13, 11, 12, 10]: the nodes' pages from the deepest node up to the root, not root to node)"
    )


@functools.cache
def gathered_up_by(reference: Any) -> Any:
    """`reference` whose match_prefix joins the pages of the matched path's nodes from the deepest up."""

    def match_prefix(self, ids: list[int]) -> Any:
        node, _ = reference.match_prefix(self, list(ids))
        pages, up = [], node
        while up is not self.root:
            pages += up.pages
            up = up.parent
        return node, pages

    return type("GatheredUp", (reference,), {"match_prefix": match_prefix})


def match_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: PAGES_GATHERED_UP where the answer gives what
    the reference with that mistake gives (`play` drives a class through a scene), else whole_cut's
    hint for a match cut to whole pages wrongly, else kept_state's for a match or an evict heap kept from an
    earlier call, else `hint`'s."""
    other = cuts_hint(play, reference, kept_hint(play, reference, hint))

    def either(scene: Any, diff: Any) -> str:
        made = made_by(play, gathered_up_by(reference), reference, scene, diff)
        return PAGES_GATHERED_UP if made else other(scene, diff)

    return either
