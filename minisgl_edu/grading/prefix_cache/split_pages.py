"""Exercise 6: the pages a split gives each of its two parts, read when a hand case fails.

A split cuts an edge's key at n tokens; its page list holds one id per page_size tokens, so the
pages are cut at n // page_size. An answer that cuts both lists at the same index (n tokens, or
any other count) leaves the upper part with too many or too few pages, and the lower part with the
rest: a later match returns pages of tokens it never matched, or loses some. The failed check
shows only that symptom (often a match that returned a page too many, which reads like a
partial-page match), so `split_pages_wrong` plays one split on a fresh tree of the answer's class
and reads the two parts, through the given `Node` (`root`, `children`, `key`, `pages`).

The base part's hand cases call it from `own_hints` (tree.py); the LFU stretch's hand cases are
wrapped by `named_by_probe` (probe_named.py), which also reads it when the answer's own code crashed (an LFU
`evict` that reads `node.pages[0]` of a lower part left with no pages raises IndexError first).

It speaks only when that split really gives a part other pages than its key's: the edge was
stored whole and right before the cut, and both parts are found by their keys. A class that keeps
its tree some other way, or that does not cut the edge on a match, is not looked at.
"""

from __future__ import annotations

from typing import Any, Optional

SPLIT_PAGES = (
    "a split cuts the key at n tokens but the pages at n // page_size: `pages` holds one id per page_size "
    "tokens, so the upper part keeps pages[:n // page_size] and the lower part pages[n // page_size:]; "
    "every node holds len(key) // page_size pages"
)

_IDS = list(range(1, 13))  # six pages of page size 2, every token distinct
_PAGES = [10, 11, 12, 13, 14, 15]
_CUT = 4  # tokens: match_prefix of the first two pages cuts the edge there


def _nodes(cache: Any) -> dict[tuple, Any]:
    """Every node below the root by its key (the given Node's `children`); {} if unreadable."""
    out: dict[tuple, Any] = {}
    stack = list(getattr(getattr(cache, "root", None), "children", {}).values())
    while stack:
        node = stack.pop()
        key, children = getattr(node, "key", None), getattr(node, "children", None)
        if key is None or not isinstance(children, dict):
            return {}
        out[tuple(key)] = node
        stack.extend(children.values())
    return out


def _unit(upper: list, lower: list) -> str:
    """Where the answer cut the page list, said against the tokens and the pages of the cut."""
    for at in range(len(_PAGES) + 1):
        if upper == _PAGES[:at] and lower == _PAGES[at:]:
            if at == _CUT:
                return (
                    f" The page list was cut at {_CUT}, the count of tokens, not at {_CUT} // 2 = {_CUT // 2}, "
                    "the count of pages."
                )
            return f" The page list was cut at {at}, not at {_CUT} // 2 = {_CUT // 2}, the count of pages."
    return ""


def split_pages_wrong(cls: Any) -> Optional[str]:
    """What a split of the answer's class gives each part, when a part's pages are not its key's;
    None when the split is right or cannot be read."""
    try:
        cache = cls(2)
        cache.insert(list(_IDS), list(_PAGES))
        whole = _nodes(cache).get(tuple(_IDS))
        if whole is None or list(getattr(whole, "pages", [])) != _PAGES:
            return None  # not one edge stored whole: no split to read
        cache.match_prefix(_IDS[:_CUT])
        nodes = _nodes(cache)
        upper, lower = nodes.get(tuple(_IDS[:_CUT])), nodes.get(tuple(_IDS[_CUT:]))
        if upper is None or lower is None:
            return None
        up, low = list(getattr(upper, "pages", [])), list(getattr(lower, "pages", []))
    except Exception:
        return None
    if up == _PAGES[: _CUT // 2] and low == _PAGES[_CUT // 2 :]:
        return None
    return (
        f"On a fresh tree, insert({_IDS}, {_PAGES}) stores one edge, and match_prefix({_IDS[:_CUT]}) cuts it "
        f"after {_CUT} tokens ({_CUT // 2} pages): the upper part (key {_IDS[:_CUT]}) holds pages {up}, expected "
        f"{_PAGES[: _CUT // 2]}, and the lower part (key {_IDS[_CUT:]}) holds pages {low}, expected "
        f"{_PAGES[_CUT // 2 :]}.{_unit(up, low)}"
    )
