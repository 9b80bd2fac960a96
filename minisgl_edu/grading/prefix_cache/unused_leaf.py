"""A leaf that insert creates is used by that insert, as every node the insert passes is.

An answer that hangs the new leaf without marking it used ("nobody has used it yet") leaves it with the
oldest last use of the tree, so the prefix a request has just handed back is evicted before prefixes
nobody has used for a long time. Evicting the newest leaf first is a symptom other mistakes share
(most recent first, a walk of the tree), so `new_leaf_unused` asks two questions on trees of its own
and names this mistake only when both answers are this mistake's: X is inserted and matched, then Y is
inserted (a new leaf) and evict(1) frees Y; on a second tree, where Y is inserted a second time (that
insert passes Y's node, which is a use), evict(1) frees X.

`check_new_leaf_used` fails on that first tree. The cases on eviction order call it before they
evict among leaves that were only inserted: such an answer leaves them all at the same last use, and
the tie-breaker it uses (often `id(node)`, an address) would pick the freed leaf by chance.
"""

from __future__ import annotations

NEW_LEAF_UNUSED = (
    "the leaf insert creates is used by that insert: give it the newest last use, as you do for the nodes "
    "insert passes. Left unmarked it looks older than every other node, and a prefix just handed back is "
    "evicted first"
)


def _first_freed(cls, page_size: int, insert_y_twice: bool) -> list[int]:
    """X (page 10) inserted and matched, then Y (page 20) inserted, once or twice: what evict(1) frees."""
    x, y = [1] * page_size, [2] * page_size
    cache = cls(page_size)
    cache.insert(list(x), [10])
    cache.match_prefix(list(x))
    cache.insert(list(y), [20])
    if insert_y_twice:
        cache.insert(list(y), [21])  # a finished request handing Y back: it passes Y's node
    return sorted(cache.evict(1))


def new_leaf_unused(cls, page_size: int = 2) -> bool:
    """Whether `cls` leaves the leaf an insert creates unused (its last use older than every match)."""
    try:
        return _first_freed(cls, page_size, False) == [20] and _first_freed(cls, page_size, True) == [10]
    except Exception:
        return False


def check_new_leaf_used(cls, page_size: int = 2) -> None:
    """Fail, with the story of the probe, when `cls` leaves the leaf an insert creates unused."""
    if new_leaf_unused(cls, page_size):
        raise AssertionError(
            f"{[1] * page_size} (page 10) was inserted and matched, then {[2] * page_size} (page 20) was "
            "inserted; evict(1) freed [20], expected [10]: page 20 is not the least recently used, its insert "
            f"came after the match of page 10. Hint: {NEW_LEAF_UNUSED}"
        )
