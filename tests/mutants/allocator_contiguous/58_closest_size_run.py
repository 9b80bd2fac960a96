"""Reads "best fit" as "the run whose length is closest to n" (`min(runs, key=|length - n|)`), and
takes as many pages as that run holds, then goes on with the rest the same way. A run one page
too short is then preferred to a run that fits with two pages to spare: the request is split over
several runs although a single run holds all of it, which best fit (the smallest run with at
least n pages) never does."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: best fit, not first fit", "stretch: many steps against the reference"}
MUST_SAY = "the run whose length is closest to 3"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not the run closest in size to n"


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
            # best fit: the run closest in size to what is needed
            _, start = min((abs(length - need), start) for start, length in self.by_start.items())
            length = self.by_start[start]
            count = min(need, length)
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
                raise ValueError(f"page {p!r} is not in use (freed twice, or never handed out)")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            self.in_use.remove(p)
            start, length = p, 1
            if p in self.by_end:
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
