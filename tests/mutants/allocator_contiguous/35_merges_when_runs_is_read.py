"""free() puts each page back as a run of one page, and the runs property merges neighbouring
pieces and stores the merged runs back. So whenever runs is read before an allocate, allocate sees
merged runs and answers right; but the cache manager never reads runs, and without that read
allocate picks among the unmerged pieces. E.g. ContiguousPageAllocator(7): allocate(5), free([1]),
free([2]), free([3]), then allocate(3) gives [1, 5, 6] here, [1, 2, 3] for the reference (and
[1, 2, 3] here too if runs was read just before)."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: coalescing, left neighbour freed first"}
MUST_SAY = "your free runs are merged only when runs is listed"
CAUGHT_BY = {"hand"}
HINT_SAYS = "merge at free() time, in the runs allocate chooses from"


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
        merged: list[list[int]] = []
        for start, length in sorted(self.by_start.items()):
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1][1] += length
            else:
                merged.append([start, length])
        self.by_start = {start: length for start, length in merged}
        self.by_end = {start + length: start for start, length in merged}
        return [(start, length) for start, length in merged]

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
        for p in pages:
            self.in_use.remove(p)
            self.by_start[p] = 1  # merged with its neighbours the next time runs is read
            self.by_end[p + 1] = p
