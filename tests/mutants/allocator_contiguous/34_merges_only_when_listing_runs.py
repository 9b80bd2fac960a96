"""free() puts each page back as a run of one page and leaves merging to the runs property, which
merges neighbouring pieces only when it lists them; allocate() picks among the unmerged pieces. So
runs looks right after every step, but allocate does not see a run made by several frees as one
run: it falls back to taking pieces whole, or picks another run. E.g. ContiguousPageAllocator(7):
allocate(5) -> [0, 1, 2, 3, 4], free([1]), free([2]), free([3]): runs is [(1, 3), (5, 2)] as it
should be, but allocate(3) gives [1, 5, 6] here, [1, 2, 3] for the reference."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: best fit, not first fit",
    "stretch: ties go to the lowest id",
    "stretch: fragmented, enough pages in all",
    "stretch: coalescing, left neighbour freed first",
    "stretch: many steps against the reference",
    "stretch: in the real engine",
    "stretch: generated: 200 runs of allocate and free, pages and runs compared after each step",
}
MUST_SAY = "allocate still sees pages 1, 2 and 3 as separate runs"
CAUGHT_BY = {"hand", "generated"}
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
            self.by_start[p] = 1  # merged with its neighbours in runs
            self.by_end[p + 1] = p
