"""Checks every id of the call against range(num_pages) first (so an id that is not a page
changes nothing), then takes each page out of the pages in use and puts the whole list on the
free list after the loop. A page that is free already, or listed twice, is refused in that
loop: the pages before it are then neither in use nor free, lost for good."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"generated: 200 runs of allocate and free, the invariant checked after each step"}
MUST_SAY = "num_free after it"
CAUGHT_BY = {"generated"}
HINT_SAYS = "none is lost"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if not 0 <= p < self.num_pages:
                raise ValueError(f"{p} is not a page id")
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
        self.free_list.extend(pages)
