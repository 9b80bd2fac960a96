"""Writes the fallback recursively, passing the pages taken so far down as an accumulator with a
default, `def allocate(self, n, taken=[])`. The default list is built once, when the def runs, and
shared by every call (and every allocator) that does not pass one: each allocate() returns all the
pages handed out by earlier calls too, so pages come back twice and the cache manager gets too many."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: best fit, not first fit",
    "stretch: fragmented, enough pages in all",
    "stretch: many steps against the reference",
    "stretch: generated: 200 runs of allocate and free, pages and runs compared after each step",
}
MUST_SAY = "the result holds pages that earlier calls handed out"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a default argument such as taken=[] is made once"


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

    def allocate(self, n: int, taken: list = []):
        """Best fit if one run holds n; else the largest run whole and the rest by a recursive call."""
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        if n == 0:
            return sorted(taken)
        fitting = [(length, start) for start, length in self.by_start.items() if length >= n]
        if fitting:
            length, start = min(fitting)  # smallest, then lowest start
            count = n
        else:
            _, start = min((-length, start) for start, length in self.by_start.items())  # largest
            length = count = self.by_start[start]
        del self.by_start[start]
        del self.by_end[start + length]
        if count < length:
            self.by_start[start + count] = length - count
            self.by_end[start + length] = start + count
        got = list(range(start, start + count))
        self.in_use.update(got)
        taken.extend(got)
        if count < n:
            return self.allocate(n - count, taken)
        return sorted(taken)

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
