"""Exercise 5's stretch: a cached prefix stored over several nodes of the radix tree.

`scheduler.cache.match(req)` returns `(handle, pages)`: `handle` is the deepest node matched, and
`pages` the pages of the whole path from the root down to it. A prefix cached by one request and
extended by another, or split where a later request's match ended, is stored over several nodes,
so the handle's own edge (`len(handle.key)`) holds only the last part of the prefix. A sort key
read from the handle counts that last part: a long prefix over two short edges loses to a shorter
one on a single edge.

`counts_the_deepest_edge(fn)` plays the answer on such a scene, where only that key gives the order
the answer gives; `DEEPEST_EDGE` is the Mistake's wording. The case "whole pages, as admit counts
them" asks it when its order is wrong (its second scene splits a cached prompt, so that key and the
whole-prompt match give the same wrong order there).
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, decide, lpm_sched

DEEPEST_EDGE = (
    "you count the pages of the matched node's own edge, the handle cache.match(req) returns "
    "(len(handle.key), handle.pages), not the pages of the whole matched path: the handle is only the deepest node, "
    "and a prefix cached over several nodes keeps its earlier pages on the nodes above it",
    "sort by len(pages), where handle, pages = scheduler.cache.match(req): the pages of the whole path "
    "from the root, not the deepest node's own edge (len(handle.key), handle.pages)",
)


def _two_edges():
    """A 16-token prompt cached on one edge, then split in two 8-token edges by request 0's match
    (it shares 8 tokens); a 12-token prompt cached on one edge. Requests 0, 1, 2 find 2, 3 and 4
    cached pages; the edge each one's match ends on holds 2, 3 and 2."""
    s = lpm_sched()
    long = cached(s, token_ids(16, 150))
    short = cached(s, token_ids(12, 151))
    add_waiting(s, 0, long[:8] + token_ids(5, 152), pages=2)  # its match splits the 16-token edge
    add_waiting(s, 1, short + token_ids(3, 153), pages=3)
    add_waiting(s, 2, long + token_ids(3, 154), pages=4)  # 4 pages over two edges of 2
    return s


def counts_the_deepest_edge(fn) -> bool:
    """Whether `fn` orders the two-edge scene as the deepest edge's pages do (1, 0, 2), where the
    whole path's pages give 2, 1, 0 and tokens in common or the whole prompt's match agree with it."""
    try:
        batch = decide(fn, _two_edges())
    except Exception:
        return False
    return batch is not None and batch.is_prefill and [it.req.uid for it in batch.items] == [1, 0, 2]
