"""Exercise 6: an evict that unhooks a leaf from its parent by the leaf's whole key, read when the
answer's code raised KeyError in a hand case (base.py wraps its hand cases with `named_by_probe`,
probe_named.py).

A parent files each child under the first page of the child's key (`key[:page_size]`), and that is
the key evict must delete it by. `del parent.children[node.key]` deletes by the whole edge: for a
leaf of one page the two are the same, so small trees evict fine, while a leaf of two pages or more
raises KeyError with its whole key. A KeyError alone has other causes, so the cause is confirmed on
fresh trees of its own: a leaf of one page is evicted, and a leaf of two pages raises KeyError whose
key is that leaf's whole edge, with both its pages still cached.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.leaf_again import evict_key_error

UNHOOKED_BY_WHOLE_KEY = (
    "a parent files each child under the first page of the child's key, node.key[:page_size], so evict "
    "unhooks a leaf with del parent.children[node.key[:page_size]], not by its whole key node.key: the two "
    "are the same only for a leaf of one page, and a leaf of two pages or more is not found (KeyError)"
)

_LONG = ([1, 2, 3, 4], [10, 11])  # one leaf of two pages under the root


def _one_page_evicts(cls) -> bool:
    """A leaf of one page under the root is evicted: the whole key and its first page are the same."""
    cache = cls(2)
    cache.insert([5, 6], [20])
    return sorted(cache.evict(1)) == [20]


def unhooked_by_whole_key(cls) -> str:
    """What evict did on fresh trees when it raised KeyError with the whole key of a leaf of two pages
    (a leaf of one page evicts fine); else ''."""
    ids, pages = _LONG
    try:
        if not _one_page_evicts(cls):
            return ""
        cache = cls(2)
        cache.insert(list(ids), list(pages))
        if evict_key_error(cache, 1) != tuple(ids) or sorted(cache.cached_pages()) != pages:
            return ""
    except Exception:
        return ""
    return (
        f"On a fresh tree, page size 2, a leaf of one page is evicted fine, but with one leaf {ids} -> {pages} "
        f"evict(1) raised KeyError: {tuple(ids)}, the leaf's whole key, while its parent files it under "
        f"{tuple(ids[:2])}, its first page; pages {pages} stayed cached"
    )
