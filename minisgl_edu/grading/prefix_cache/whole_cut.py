"""Two more ways to cut match_prefix's ids to whole pages wrongly (match_cut.py has the third, a page
count used as tokens), and the generated phase's hint for all three.

A negative slice, `ids[: -(len(ids) % page_size)]`, is right while a partial page is left over, but
when len(ids) is a whole number of pages it is `ids[:-0]`, that is `ids[:0]`, the empty list: the
match of whole pages finds nothing, yet the same ids with one token more find every page.
`cut_to_nothing` recognises it on fresh trees.

A bit mask, `len(ids) & -page_size` (or `& ~(page_size - 1)`), rounds down to a multiple of the page
size only when the page size is a power of two: right for pages of 2 and 4 tokens (the hand-built trees
and the engine use powers of two), wrong for 3, where 3 & -3 == 1. `cut_by_a_bit_mask` recognises it
on fresh trees of both kinds, and the hand case `case_page_size_three` plays such a tree.

The base part's hand cases ask both probes for any failed check (tree.own_hints, through CUT_PROBES);
the generated phase asks `cuts_hint`, which replays the scene with the reference made to cut each of
the three ways. Where more than one of them gives what the answer gave (a one-page match comes back
empty under all three), the hint names each that fits: the scene cannot tell them apart.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import made_by
from minisgl_edu.grading.prefix_cache.match_cut import MATCH_CUT_TO_A_PAGE_COUNT, cut_by, cut_to_a_page_count

FIX = "cut with ids[: len(ids) // page_size * page_size] (or ids[: len(ids) - len(ids) % page_size])"
NEGATIVE_SLICE = (
    "ids[: -(len(ids) % page_size)] is ids[:-0] when len(ids) is a whole number of pages, and -0 is 0: that is "
    "ids[:0], the empty list"
)
BIT_MASK = (
    "a bit mask (len(ids) & -page_size, len(ids) & ~(page_size - 1)) rounds down to a multiple of page_size only "
    "when page_size is a power of two, and the page size may be any integer (with pages of 3 tokens, 3 & -3 == 1)"
)
CUT_TO_NOTHING = (
    "match_prefix found nothing when len(ids) is a whole number of pages, though the same ids with one token more "
    f"find the pages: {NEGATIVE_SLICE}; {FIX}"
)
CUT_BY_A_BIT_MASK = f"with pages of 3 tokens the match kept a wrong number of tokens: {BIT_MASK}; {FIX}"

CACHED = [1, 2, 3, 4, 5, 6, 7, 8]  # four pages of 2 on pages 10..13, two pages of 4 on pages 10, 11
NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9]  # three pages of 3, on pages 10, 11, 12


def _matched(cls, page_size: int, cached: list[int], lengths: tuple[int, ...]) -> dict[int, list[int]]:
    """The pages match_prefix returns for the first n ids of `cached` + [0, 0, 0, 0], each n of
    `lengths` on a fresh tree of its own holding `cached` (pages 10, 11, ...)."""
    got = {}
    for n in lengths:
        cache = cls(page_size)
        cache.insert(list(cached), list(range(10, 10 + len(cached) // page_size)))
        got[n] = list(cache.match_prefix((cached + [0, 0, 0, 0])[:n])[1])
    return got


def cut_to_nothing(cls) -> str:
    """' (...)' saying that match_prefix found nothing for 8 and 6 ids of a cached [1..8] (pages of 2)
    yet the right pages for 9 and 7 ids; else ''."""
    try:
        got = _matched(cls, 2, CACHED, (8, 6, 9, 7))
    except Exception:
        return ""
    if got != {8: [], 6: [], 9: [10, 11, 12, 13], 7: [10, 11, 12]}:
        return ""
    return (
        " (on a fresh tree with [1, 2, 3, 4, 5, 6, 7, 8] cached on pages 10..13, page size 2, match_prefix of its "
        "8 ids returned [] and of its first 6 ids [], yet of 9 ids (one token more) [10, 11, 12, 13] and of 7 ids "
        "[10, 11, 12]: your match found nothing exactly when len(ids) was a whole number of pages)"
    )


def cut_by_a_bit_mask(cls) -> str:
    """' (...)' saying that match_prefix was right with pages of 2 and of 4 tokens, yet with pages of 3
    kept len(ids) & -3 tokens: nothing for 3 ids, one page for 6 and 7; else ''."""
    try:
        powers = _matched(cls, 2, CACHED, (8, 9)), _matched(cls, 4, CACHED, (8, 9))
        three = _matched(cls, 3, NINE, (3, 6, 7, 9))
    except Exception:
        return ""
    right = powers == ({8: [10, 11, 12, 13], 9: [10, 11, 12, 13]}, {8: [10, 11], 9: [10, 11]})
    if not right or three != {3: [], 6: [10], 7: [10], 9: [10, 11, 12]}:
        return ""
    return (
        " (on fresh trees your match was right with pages of 2 and of 4 tokens, but with pages of 3, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9] cached on pages 10, 11, 12, match_prefix of its first 3 ids returned [] "
        "(expected [10]) and of its first 6 and 7 ids [10] (expected [10, 11]): it kept len(ids) & -3 tokens, "
        "1 of 3, 4 of 6, 5 of 7)"
    )


# Asked by tree.own_hints in this order, beside the other probes: each answer fits one of them only.
CUT_PROBES = (
    (cut_to_a_page_count, MATCH_CUT_TO_A_PAGE_COUNT),  # a match of the first len(ids) // page_size tokens
    (cut_to_nothing, CUT_TO_NOTHING),  # ids[:-0]: whole-page ids match nothing
    (cut_by_a_bit_mask, CUT_BY_A_BIT_MASK),  # len & -page_size: right for powers of two only
)


def _cut(name: str, reference: Any, keep: Callable[[int, int], int]) -> Any:
    """`reference` whose match_prefix matches only the first keep(len(ids), page_size) of its ids."""

    def match_prefix(self, ids: list[int]) -> Any:
        ids = list(ids)
        return reference.match_prefix(self, ids[: keep(len(ids), self.page_size)])

    return type(name, (reference,), {"match_prefix": match_prefix})


@functools.cache
def sliced_by(reference: Any) -> Any:
    """`reference` whose match_prefix cuts with ids[: -(len(ids) % page_size)]."""
    return _cut("CutByANegativeSlice", reference, lambda n, ps: -(n % ps) if n % ps else 0)


@functools.cache
def masked_by(reference: Any) -> Any:
    """`reference` whose match_prefix cuts with ids[: len(ids) & -page_size]."""
    return _cut("CutByABitMask", reference, lambda n, ps: n & -ps)


# each way of cutting: the reference made to cut so, the hint when it alone fits, its reason when several do
_WAYS = (
    (cut_by, MATCH_CUT_TO_A_PAGE_COUNT, MATCH_CUT_TO_A_PAGE_COUNT.split(". ", 1)[1]),
    (sliced_by, CUT_TO_NOTHING, NEGATIVE_SLICE),
    (masked_by, CUT_BY_A_BIT_MASK, BIT_MASK),
)


def cuts_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: the hint of the one wrong cut to whole pages
    whose reference gives what the answer gave on the scene (`play` drives a class through it), the
    reasons of each where several do, else `hint`'s."""

    def either(scene: Any, diff: Any) -> str:
        fits = [
            (alone, why) for mistaken, alone, why in _WAYS if made_by(play, mistaken(reference), reference, scene, diff)
        ]
        if len(fits) == 1:
            return fits[0][0]
        if fits:
            return (
                f"your match kept a wrong number of its ids' tokens; with pages of {scene.page_size} tokens each of "
                "these cuts to whole pages gives what yours gave here: "
                + " ".join(f"({i}) {why}." for i, (_, why) in enumerate(fits, 1))
                + f" Whichever yours is, {FIX}"
            )
        return hint(scene, diff)

    return either
