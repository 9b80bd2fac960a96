"""free() looks up the run that ends just before each page in a copy of the run ends taken when
the call began. A page freed earlier in the same call makes a new run ending just before the next
page, but the copy does not have it, so pages freed together never merge with each other on the
left: free([0, 1, 2]) leaves three runs of one page where the contract has one run of three."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: best fit, not first fit",
    "stretch: coalescing, left neighbour freed first",
    "stretch: many steps against the reference",
}
MUST_SAY = "runs (0, 1) and (1, 1) touch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "joins the free run that ends just before it"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # each free run twice: by its start (start -> length) and by its end (end -> start)
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
                length, start = min(fitting)  # smallest, then lowest start
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())  # largest
                length = count = self.by_start[start]
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:  # the rest of the run stays free
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
        ends = dict(self.by_end)  # the runs that end somewhere, looked up once
        for p in pages:
            self.in_use.remove(p)
            start, length = p, 1
            if p in ends and ends[p] in self.by_start:  # a free run ends just before p
                start = ends[p]
                self.by_end.pop(p, None)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:  # a free run starts just after p
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
