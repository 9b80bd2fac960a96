"""Keeps only the free runs (no set of pages in use): a page is in use when it is a page id and lies
in no free run, tested with `start <= p <= start + length`. The end is inclusive where the run's
pages are start .. start + length - 1, so the page just after a free run counts as free: giving back
a page in use that sits right after a free run raises ValueError ("not in use") and it is never freed."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: coalescing, left neighbour freed first", "stretch: bad frees change nothing"}
MUST_SAY = "is in use and sits right after the free run"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test a page with start <= p < start + length"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # each free run twice: start -> length, and end (one past its last page) -> start
        self.by_start: dict[int, int] = {0: num_pages} if num_pages > 0 else {}
        self.by_end: dict[int, int] = {num_pages: 0} if num_pages > 0 else {}

    @property
    def num_free(self) -> int:
        return sum(self.by_start.values())

    @property
    def runs(self) -> list[tuple[int, int]]:
        return sorted(self.by_start.items())

    def _is_free(self, p: int) -> bool:
        return any(start <= p <= start + length for start, length in self.by_start.items())

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)  # smallest, then lowest start
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())  # largest
                length = count = self.by_start[start]
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:
                self.by_start[start + count] = length - count
                self.by_end[start + length] = start + count
            pages.extend(range(start, start + count))
        return sorted(pages)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        for p in pages:
            if not 0 <= p < self.num_pages or self._is_free(p):
                raise ValueError(f"page {p!r} is not in use (freed twice, or never handed out)")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            start, length = p, 1
            if p in self.by_end:  # a free run ends just before p
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:  # a free run starts just after p
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
