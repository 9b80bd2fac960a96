"""free() adds the pages of the call as one run, (min(pages), len(pages)), merged with its
neighbours, as if a call always gave back one block of adjacent pages. A call may give back pages
that are not next to each other (a request whose pages came from several runs, or pages given back
in any grouping): free([2, 0]) then lists page 1, still in use, as free, and leaves page 2 out."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: bad frees change nothing", "stretch: many steps against the reference"}
MUST_SAY = "treats the pages of one call as one run"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the pages of one free() call need not be next to each other"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.by_start: dict[int, int] = {0: num_pages} if num_pages > 0 else {}
        self.by_end: dict[int, int] = {num_pages: 0} if num_pages > 0 else {}
        self.in_use: set[int] = set()

    @property
    def num_free(self) -> int:
        return self.num_pages - len(self.in_use)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return sorted(self.by_start.items())

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())
                length = count = self.by_start[start]
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:
                self.by_start[start + count] = length - count
                self.by_end[start + length] = start + count
            pages.extend(range(start, start + count))
        self.in_use.update(pages)
        return sorted(pages)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p!r} is not in use")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        if not pages:
            return
        self.in_use.difference_update(pages)
        first = min(pages)
        start, length = first, len(pages)
        if first in self.by_end:
            start = self.by_end.pop(first)
            length += self.by_start.pop(start)
        if first + len(pages) in self.by_start:
            after = self.by_start.pop(first + len(pages))
            del self.by_end[first + len(pages) + after]
            length += after
        self.by_start[start] = length
        self.by_end[start + length] = start
