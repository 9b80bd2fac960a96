"""Marks pages in use inside each branch of allocate(), and the branch that takes the largest run
whole (no single run holds the pages still needed) forgets to: those pages are handed out but not
in use. num_free is too high by the pages of the runs taken whole, a later allocate() may promise
pages that are not there, and free() of those pages is refused as if they had never been handed out."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: fragmented, enough pages in all",
    "stretch: out of pages takes nothing",
    "stretch: many steps against the reference",
    "stretch: in the real engine",
}
MUST_SAY = "your allocator does not count them in use"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the pages of a run taken whole, when no run holds n, are handed out too: mark them in use"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # Each free run twice: by its start (start -> length) and by its end (one past its last page -> start).
        self.by_start: dict[int, int] = {0: num_pages} if num_pages > 0 else {}
        self.by_end: dict[int, int] = {num_pages: 0} if num_pages > 0 else {}
        self.in_use: set[int] = set()

    @property
    def num_free(self) -> int:
        return self.num_pages - len(self.in_use)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return sorted(self.by_start.items())

    def _take(self, start: int, length: int, count: int) -> None:
        del self.by_start[start]
        del self.by_end[start + length]
        if count < length:
            self.by_start[start + count] = length - count
            self.by_end[start + length] = start + count

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)
                self._take(start, length, need)
                got = list(range(start, start + need))
                self.in_use.update(got)
                pages.extend(got)
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())
                length = self.by_start[start]
                self._take(start, length, length)
                pages.extend(range(start, start + length))
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
