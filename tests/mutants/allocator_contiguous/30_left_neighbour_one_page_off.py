"""Keys by_end by one past a run's last page (start + length), but free() looks the left neighbour
up under p - 1, as if the key were the run's last page. The run that ends just before a freed page
is keyed p, so it is never found and the two runs stay apart (or overlap once that run grows); a run
that ends one page earlier is found instead and merged across the page in use between them."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "stretch: best fit, not first fit",
    "stretch: coalescing, left neighbour freed first",
    "stretch: many steps against the reference",
}
MUST_SAY = "The left neighbour is looked up one page off"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a freed page p joins the free run that ends just before it, the run whose last page is p - 1"


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
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())
                length = count = self.by_start[start]
            self._take(start, length, count)
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
        for p in pages:
            self.in_use.remove(p)
            start, length = p, 1
            if p - 1 in self.by_end:  # a free run ends at p - 1
                start = self.by_end.pop(p - 1)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
