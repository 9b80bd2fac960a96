"""Keeps the free runs as a list sorted by start and finds a freed page's place with bisect: the run
before it is read only `if i > 0`, but the run after it as `self.free_runs[i]` with no `i < len(...)`.
A page that lies after every free run (the pool full, or only runs below it free) has no run after it:
i == len(free_runs) and free() raises IndexError, after the page was already taken out of use."""

from __future__ import annotations

import bisect

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: coalescing, right neighbour freed first",
    "stretch: bad frees change nothing",
    "stretch: generated: 200 runs of allocate and free, pages and runs compared after each step",
}
MUST_SAY = "allocate(6) then free([3]), with no free run at all, raised IndexError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "Test i < len(runs) before reading the run after it"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # the free runs as (start, length), sorted by start; never two that touch
        self.free_runs: list[tuple[int, int]] = [(0, num_pages)] if num_pages > 0 else []
        self.in_use: set[int] = set()

    @property
    def num_free(self) -> int:
        return self.num_pages - len(self.in_use)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return list(self.free_runs)

    def _take(self, i: int, count: int) -> list[int]:
        """The first `count` pages of run i; the rest of it stays free, in the same place of the list."""
        start, length = self.free_runs[i]
        if count < length:
            self.free_runs[i] = (start + count, length - count)
        else:
            del self.free_runs[i]
        return list(range(start, start + count))

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start, i) for i, (start, length) in enumerate(self.free_runs) if length >= need]
            if fitting:
                _, _, i = min(fitting)  # the smallest run that holds them, then the lowest start
                pages += self._take(i, need)
            else:
                _, _, i = min((-length, start, i) for i, (start, length) in enumerate(self.free_runs))  # largest
                pages += self._take(i, self.free_runs[i][1])
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
            i = bisect.bisect_left(self.free_runs, (p, 0))  # the first free run that starts after p
            start, length = p, 1
            if i > 0 and sum(self.free_runs[i - 1]) == p:  # a free run ends just before p
                i -= 1
                start, left = self.free_runs.pop(i)
                length += left
            if self.free_runs[i][0] == p + 1:  # a free run starts just after p
                length += self.free_runs.pop(i)[1]
            self.free_runs.insert(i, (start, length))
