"""When no run holds the pages still needed, finds the largest run with a scan over the runs in
increasing start that keeps a run whenever its length is >= the best so far: of several largest
runs that is the last one, the highest start. Best fit (a strict <) is right. The contract breaks
ties to the lowest start in both rules: for free runs (0, 3), (4, 3), (8, 3), (12, 1), allocate(8)
takes 0-2 whole first, then 4-6, then 8 and 9; this answer takes 8-10 first and ends with 0 and 1."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: fragmented, enough pages in all", "stretch: many steps against the reference"}
MUST_SAY = "tie as the largest, and you took (8, 3) whole first"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "of largest runs that tie, the one that starts lowest wins"


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

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            best = None
            for start, length in self.runs:
                if length >= need and (best is None or length < best[1]):
                    best = (start, length)
            if best is not None:
                start, count = best[0], need
            else:
                largest = None
                for start, length in self.runs:
                    if largest is None or length >= largest[1]:
                        largest = (start, length)
                start, count = largest
            taken = list(range(start, start + count))
            self.free_pages.difference_update(taken)
            pages += taken
        return sorted(pages)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            if not (isinstance(p, int) and 0 <= p < self.num_pages) or p in self.free_pages:
                raise ValueError(f"page {p!r} is not in use")
        self.free_pages.update(pages)
