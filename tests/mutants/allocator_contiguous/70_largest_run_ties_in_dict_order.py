"""When no single run holds the pages still needed, takes the largest run whole with
`max(self.by_start.items(), key=lambda kv: kv[1])`: of two largest runs of the same length, max()
keeps the one the dict lists first (the run made or reshaped earliest), not the one with the lowest
start as the contract says. After a few frees dict order and start order differ."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: fragmented, enough pages in all",
    "stretch: many steps against the reference",
    "stretch: generated: 200 runs of allocate and free, pages and runs compared after each step",
}
MUST_SAY = "of largest runs that tie, the lowest start wins"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "of largest runs that tie, the one that starts lowest wins"


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
    def runs(self):
        return sorted(self.by_start.items())

    def allocate(self, n: int):
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)
                count = need
            else:
                start, length = max(self.by_start.items(), key=lambda kv: kv[1])  # the largest run
                count = length
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:
                self.by_start[start + count] = length - count
                self.by_end[start + length] = start + count
            pages.extend(range(start, start + count))
        self.in_use.update(pages)
        return sorted(pages)

    def free(self, pages) -> None:
        pages = list(pages)
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p!r} is not in use")
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
