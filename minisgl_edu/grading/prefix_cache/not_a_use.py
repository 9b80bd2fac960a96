"""Exercise 6: only match_prefix and insert are uses; lock, unlock and evict change no last use.

A running request locks the node its match ended at and unlocks it when it finishes, maybe long
after: neither is a use of the pages (the match was). An answer that stamps a node in lock() or
unlock(), or stamps the nodes evict() looks at, reorders the leaves by when requests ended or when
memory ran short, and evicts a prefix that was matched recently before one that was not.

`check_not_a_use` plays small scenes (page size 2, single-page leaves) in which one such call falls
between two uses, each next to a control scene without it, so a difference names that call.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.tree import _evict, _insert, _match, _new

NOT_A_USE = (
    "a call that is not a use changed the order of last use: only insert and match_prefix are uses; lock, "
    "unlock and evict leave every node's last use as it was"
)
_A, _B = [1, 1], [2, 2]
_NODES = {(1, 1): [[10]], (2, 2): [[20]]}


def _lock_play(cls, before: tuple[str, ...], after: tuple[str, ...]) -> list[int]:
    """[1, 1] (page 10) inserted and matched, then [2, 2] (page 20) inserted; lock/unlock of the
    match of [1, 1] called before and after that insert; then what evict(1) frees."""
    cache = _new(cls)
    _insert(cache, _A, [10], 0, "the cache was empty")
    node, _ = _match(cache, _A)
    for call in before:
        getattr(cache, call)(node)
    _insert(cache, _B, [20], 0, "it shares nothing with [1, 1]")
    for call in after:
        getattr(cache, call)(node)
    return sorted(_evict(cache, 1, _NODES))


def _check_lock_unlock(cls) -> None:
    """Locked and unlocked between the two inserts, the match of [1, 1] keeps its last use."""
    if _lock_play(cls, ("lock", "unlock"), ()) != [10]:
        return  # the order of plain uses is wrong: the case's other checks name that
    story = (
        "[1, 1] (page 10) was inserted and matched by a request, then [2, 2] (page 20) was inserted: [1, 1] was "
        "last used before [2, 2]. "
    )
    for call, before, after, when in (
        ("unlock", ("lock",), ("unlock",), "The request locked its match before that insert and unlocked it after"),
        ("lock", (), ("lock", "unlock"), "After that insert, the request locked and unlocked its match"),
    ):
        freed = _lock_play(cls, before, after)
        if freed == [20]:
            raise AssertionError(
                f"{story}{when}; evict(1) freed [20], expected [10]: your {call}() made [1, 1] look used after "
                f"[2, 2]. Hint: {NOT_A_USE}"
            )


def evict_marks_used(cls) -> bool:
    """[1, 1, 2, 2] (pages 10, 11), [1, 1, 3, 3] (adds page 12 below 10), [5, 5] (page 50); evict(2)
    frees 11 and 12 and leaves page 10's node childless, last used by the second insert; whether a later
    evict(1) frees [5, 5] instead, because the first evict stamped page 10's node as used. A parent put
    last within the first call only (a list sorted once) competes afresh in the second, so it is not
    taken for this one."""
    cache = _new(cls)
    _insert(cache, [1, 1, 2, 2], [10, 11], 0, "the cache was empty")
    _insert(cache, [1, 1, 3, 3], [10, 12], 1, "its first page (tokens 1, 1) was cached by [1, 1, 2, 2]")
    _insert(cache, [5, 5], [50], 0, "it shares nothing with the others")
    nodes = {(1, 1, 2, 2): [[10], [11]], (1, 1, 3, 3): [[10], [12]], (5, 5): [[50]]}
    if sorted(_evict(cache, 2, nodes)) != [11, 12]:
        return False  # another mistake of the order: the case's other checks name it
    return sorted(_evict(cache, 1, {(1, 1): [[10]], (5, 5): [[50]]})) == [50]


EVICT_MARKED_USED = (
    "[1, 1, 2, 2] (pages 10, 11), [1, 1, 3, 3] (sharing page 10, adding 12) and [5, 5] (page 50) were "
    "inserted in that order; evict(2) freed 11 and 12, leaving page 10's node childless, last used by the "
    "second insert, before [5, 5]. The next evict(1) freed [50], expected [10]: your first evict() made "
    "page 10's node look used after [5, 5]"
)


def _check_evict(cls) -> None:
    """The evict of evict_marks_used leaves page 10's node its own last use."""
    if evict_marks_used(cls):
        raise AssertionError(f"{EVICT_MARKED_USED}. Hint: {NOT_A_USE}")


def check_not_a_use(cls) -> None:
    """lock, unlock and evict leave the order of last use as it was (see the module docstring)."""
    _check_lock_unlock(cls)
    _check_evict(cls)
