"""Where match_prefix cuts its ids: after the last whole page, at len(ids) // page_size * page_size
tokens. An answer that cuts at `len(ids) // page_size` uses a number of pages as a number of tokens,
and matches only the first 1/page_size of the ids: every match comes back short. `cut_to_a_page_count`
recognises it on fresh trees (the base part's hand cases ask it for any failed check, tree.own_hints);
the generated phase asks `cut_by`, the reference with that one mistake, through whole_cut.cuts_hint
(which knows two other wrong cuts to whole pages).
"""

from __future__ import annotations

import functools
from typing import Any

MATCH_CUT_TO_A_PAGE_COUNT = (
    "cut the ids to whole pages in tokens: ids[: len(ids) // page_size * page_size]. len(ids) // page_size "
    "is a number of pages; used as a number of tokens it keeps only the first 1/page_size of the ids"
)

CACHED = [1, 2, 3, 4, 5, 6, 7, 8]  # four pages of 2, on pages 10..13
# ids matched -> the pages a match cut at len(ids) // 2 tokens returns (the right ones: 10..13, 10..13, 10, 11)
CUT_PAGES = {8: [10, 11], 12: [10, 11, 12], 4: [10]}


def cut_to_a_page_count(cls) -> str:
    """' (...)' saying what match_prefix returned on fresh trees when it matched only the first
    len(ids) // page_size tokens of its ids: 4 cached pages come back as 2, 3 and 1 page for 8, 12
    and 4 ids; else ''."""
    try:
        got = {}
        for n in CUT_PAGES:
            cache = cls(2)  # a fresh tree each: page size 2, [1..8] on pages 10..13
            cache.insert(list(CACHED), [10, 11, 12, 13])
            ids = (CACHED + [9, 9, 9, 9])[:n]
            got[n] = list(cache.match_prefix(ids)[1])
    except Exception:
        return ""
    if got != CUT_PAGES:
        return ""
    return (
        " (on a fresh tree with [1, 2, 3, 4, 5, 6, 7, 8] cached on pages 10..13, page size 2, match_prefix of "
        "its 8 ids returned [10, 11], of 12 ids (4 more past it) [10, 11, 12] and of its first 4 ids [10]: "
        "your match looked at only len(ids) // 2 tokens, a count of pages used as a count of tokens)"
    )


@functools.cache
def cut_by(reference: Any) -> Any:
    """`reference` whose match_prefix matches only the first len(ids) // page_size tokens of its ids."""

    def match_prefix(self, ids: list[int]) -> Any:
        return reference.match_prefix(self, list(ids)[: len(ids) // self.page_size])

    return type("CutToAPageCount", (reference,), {"match_prefix": match_prefix})
