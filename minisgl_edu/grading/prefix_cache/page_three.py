"""A hand case with pages of 3 tokens: the other trees of the base part use pages of 2 and the engine
pages of 16, both powers of two, so a cut to whole pages that holds only for powers of two (a bit mask,
whole_cut.py) passes them all. The page size is any integer."""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.tree import _expect_pages, _insert, _new

NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9]  # three pages of 3
NINE_TXT = "[1, 2, 3, 4, 5, 6, 7, 8, 9] (pages 10, 11, 12, pages of 3 tokens)"


def case_page_size_three(cls):
    cache = _new(cls, 3)
    _insert(cache, NINE, [10, 11, 12], 0, "the cache was empty")
    _expect_pages(cache, NINE + [0], [10, 11, 12], f"all of {NINE_TXT} is cached, one token follows it")
    _expect_pages(cache, NINE[:7], [10, 11], f"with {NINE_TXT} cached, 7 tokens cover 2 whole pages of 3")
    _expect_pages(cache, NINE[:6], [10, 11], f"with {NINE_TXT} cached, its first 6 tokens are 2 whole pages")
    _expect_pages(cache, NINE[:3], [10], f"with {NINE_TXT} cached, its first 3 tokens are its first page")
    _expect_pages(cache, NINE[:2], [], "two tokens are less than a page of 3")
