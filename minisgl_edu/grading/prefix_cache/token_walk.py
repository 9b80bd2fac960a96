"""How a walk compares an edge with the ids: page by page, so that it stops at the last whole page that
matches. An answer that counts matching tokens one by one (`n += 1` while the tokens agree) stops at the
first different token, inside a page: the edge is cut there, its upper part holds a key that is not a
whole number of pages, and the lower part is filed under tokens that start inside a page. The match
that cut it still returns the right pages, but a later match or insert through that node looks up the
wrong tokens and misses a page it shares. The base part's hand cases ask `cut_inside_a_page` for any
failed check (tree.own_hints).
"""

from __future__ import annotations

TOKEN_WALK = (
    "compare an edge with the ids a whole page at a time (n += page_size while key[n:n + page_size] agree), "
    "not token by token: a walk that counts matching tokens one by one cuts the edge at the first different "
    "token, inside a page, and the node below is then filed under tokens that start inside a page"
)


def cut_inside_a_page(cls) -> str:
    """' (...)' saying what a match and an insert did on a fresh tree when the match cut an edge at the first
    different token, inside a page, and the insert after it missed the page it shares; else ''."""
    try:
        cache = cls(2)  # page size 2
        cache.insert([1, 2, 3, 4, 5, 6], [10, 11, 12])
        node, pages = cache.match_prefix([1, 2, 3, 9, 9, 9])  # differs inside the second page
        pages, key = list(pages), tuple(getattr(node, "key", ()))  # here: a pair the other way round raises
        found = cache.insert([1, 2, 3, 4, 7, 7], [20, 21, 22])  # shares pages 10 and 11
    except Exception:
        return ""
    # confirmed twice: the node the match returned ends inside a page, and the insert missed page 11
    if pages != [10] or key != (1, 2, 3) or found != 1:
        return ""
    return (
        " (on a fresh tree with [1, 2, 3, 4, 5, 6] cached on pages 10, 11, 12, page size 2, match_prefix("
        "[1, 2, 3, 9, 9, 9]) returned a node whose key is (1, 2, 3): the edge was cut after 3 tokens, inside "
        "the second page; then insert([1, 2, 3, 4, 7, 7], ...) found 1 cached page, not 2 (pages 10, 11))"
    )
