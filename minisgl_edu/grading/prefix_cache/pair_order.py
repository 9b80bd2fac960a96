"""Exercise 6: the pair match_prefix returns, checked where the hand cases read it (`_match`, tree.py).

match_prefix returns `(node, pages)`: the cache manager unpacks `handle, pages = match_prefix(...)`,
locks the node and gives the request the pages. An answer that returns `(pages, node)`, the same two
things the other way round, fails every later check with a crash on a node where a list belongs, which
names no order. `check_pair` reads the pair itself: it names the order only when the first item is a
list of page ids and the second is not a list (a node), so a pair that is wrong in another way keeps
the plain message.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

PAIR_ORDER = (
    "match_prefix returns the pair in the order (node, pages): the node where the match ends first, then "
    "the list of its pages; the cache manager unpacks `handle, pages = match_prefix(ids)` and locks the handle"
)


def _page_list(x: object) -> bool:
    return isinstance(x, list) and all(isinstance(p, int) for p in x)


def check_pair(got: object, ids: list[int]) -> None:
    """Fail unless `got`, what match_prefix(ids) returned, is a pair; name the order when it holds the
    pages first and a node second."""
    assert isinstance(got, tuple) and len(got) == 2, (
        f"match_prefix must return a pair (node, pages), not {type(got).__name__}"
    )
    first, second = got
    if _page_list(first) and not isinstance(second, list) and second is not None:
        raise Mistake(
            f"match_prefix({ids}) returned ({first}, {type(second).__name__} object): a list of pages first "
            "and a node second",
            PAIR_ORDER,
        )
