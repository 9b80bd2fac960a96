"""The LFU stretch: an insert that counts hits without a line of counting code of its own.

A base RadixCache.insert may find what the tree holds with `self.match_prefix(key)`: right in the base
part, where match_prefix is the base one. In LFURadixCache, `self.match_prefix` is looked up on the
object, so the base insert's call runs the LFU override and every insert counts a hit on each node of
the cached prefix it passes. The case "stretch: insert is not a hit" sees the hits; `reaches_the_override`
tells this cause from an insert override that counts on purpose, by counting the calls an insert makes
to the class's own match_prefix.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.lfu_counted_only import counted_leaves_only

INSERT_THROUGH_THE_OVERRIDE = (
    " (your insert counted hits: each insert reached your LFU match_prefix. self.match_prefix(...) in "
    "the base class's insert runs the subclass's method, the LFU one, which counts a hit. Let insert walk the "
    "tree itself (a helper such as walk) or call RadixCache.match_prefix(self, ...), which counts nothing)"
)


def _base_match(cls):
    """The match_prefix of the nearest class above `cls` that has one, or None."""
    for base in cls.__mro__[1:]:
        if "match_prefix" in vars(base):
            return vars(base)["match_prefix"]
    return None


def reaches_the_override(cls, page_size: int = 2) -> bool:
    """`cls` overrides match_prefix, and its insert calls that override: two inserts of the same ids
    (a new leaf, then every page cached) each go through it, seen through a counting stand-in put on
    the object, which `self.match_prefix` finds before the class's method."""
    own = getattr(cls, "match_prefix", None)
    if own is None or own is _base_match(cls):
        return False
    try:
        cache = cls(page_size)
        calls = []
        override = cache.match_prefix

        def counted(*args, **kwargs):
            calls.append(args)
            return override(*args, **kwargs)

        cache.match_prefix = counted
        ids = [1] * page_size + [2] * page_size
        cache.insert(list(ids), [10, 11])
        after_first = len(calls)
        cache.insert(list(ids), [20, 21])
        return after_first >= 1 and len(calls) >= 2 * after_first
    except Exception:
        return False


def insert_counted(cls) -> str:
    """What the case "stretch: insert is not a hit" says when evict kept the only-inserted leaf and freed
    the matched one: nothing where evict never sees an unmatched leaf (lfu_counted_only.py names that),
    this module's cause where the insert reaches the override, else that the insert counted hits."""
    if counted_leaves_only(cls):
        return ""
    return (
        INSERT_THROUGH_THE_OVERRIDE
        if reaches_the_override(cls)
        else " (your insert counted hits: only match_prefix does)"
    )
