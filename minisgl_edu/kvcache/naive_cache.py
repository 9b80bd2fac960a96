"""The naive prefix cache: caches nothing.

Where this sits on the request path: the scheduler asks the prefix cache, when it admits a
request, which leading pages of the prompt are already computed. This one always answers
"none", and when a request finishes all its pages go straight back to the free list. It is the
baseline the radix cache is compared with (same outputs, more computation).
"""

from __future__ import annotations


class NaiveCache:
    name = "naive"

    def __init__(self, page_size: int) -> None:
        self.page_size = page_size

    def match_prefix(self, ids: list[int]) -> tuple[None, list[int]]:
        return None, []

    def lock(self, handle: None) -> None:
        pass

    def unlock(self, handle: None) -> None:
        pass

    def insert(self, ids: list[int], pages: list[int]) -> int:
        """Takes nothing: answering "all of them were already there" makes the caller free them."""
        return len(pages)

    def evict(self, num_pages: int) -> list[int]:
        return []

    @property
    def num_evictable(self) -> int:
        return 0

    @property
    def num_cached(self) -> int:
        return 0

    def cached_pages(self) -> set[int]:
        return set()

    def sequences(self) -> set[tuple[int, ...]]:
        return set()
