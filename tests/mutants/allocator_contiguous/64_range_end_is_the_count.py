"""Lists the pages it takes from a run as `range(start, count)`, the second argument read as "how many"
instead of the end (start + count). For a run that starts at page 0 the two agree, so a fresh allocator
looks right; from any other run it lists too few pages, or none, though its books took them, and the loop
goes on to eat the next runs (min() of no runs left raises ValueError)."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: best fit, not first fit", "stretch: ties go to the lowest id"}
MUST_SAY = "range(7, 2) is empty"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "range(start, start + n)"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # Each free run twice: by its start (start -> length) and by its end (end -> start, where
        # end is one past its last page), so a freed page finds both its neighbours at once.
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
            pages.extend(range(start, count))
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
            if p in self.by_end:  # a free run ends just before p
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:  # a free run starts just after p
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
