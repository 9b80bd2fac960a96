"""Best fit when one run holds n pages; otherwise a separate fallback loop takes the largest run
whole (right) but serves the pages still needed from the FIRST run that holds them, the lowest
start, instead of applying the best-fit rule again. The contract serves the rest "by these same two
rules, again and again": the smallest run that holds it, ties to the lowest start. First fit cuts a
larger run when a smaller one further up would do. Differs e.g. for free runs (0, 5), (6, 4), (11,
2) and allocate(7): both take 0..4 whole, then the reference takes 11, 12 and this answer 6, 7."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: fragmented, enough pages in all", "stretch: many steps against the reference"}
MUST_SAY = "from the smallest run that holds them, (11, 2), not (6, 4)"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the pages still needed come by best fit"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_pages: set[int] = set(range(num_pages))

    @property
    def num_free(self) -> int:
        return len(self.free_pages)

    @property
    def runs(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for p in sorted(self.free_pages):
            if out and out[-1][0] + out[-1][1] == p:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            else:
                out.append((p, 1))
        return out

    def _take(self, start: int, count: int) -> list[int]:
        pages = list(range(start, start + count))
        self.free_pages.difference_update(pages)
        return pages

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        if n == 0:
            return []
        fitting = [(length, start) for start, length in self.runs if length >= n]
        if fitting:
            _, start = min(fitting)  # best fit, then the lowest start
            return self._take(start, n)
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            runs = self.runs
            first = next(((s, length) for s, length in runs if length >= need), None)
            if first is not None:  # the rest fits in a run: the first one that holds it
                pages += self._take(first[0], need)
            else:  # the largest run whole, the lowest start on ties
                start, length = min(runs, key=lambda r: (-r[1], r[0]))
                pages += self._take(start, length)
        return sorted(pages)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            if not (isinstance(p, int) and 0 <= p < self.num_pages) or p in self.free_pages:
                raise ValueError(f"page {p!r} is not in use")
        self.free_pages.update(pages)
