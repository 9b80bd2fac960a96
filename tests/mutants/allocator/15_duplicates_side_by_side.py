"""Refuses the same page twice in one call by comparing each page with the one before it, as if
the pages came sorted. The cache manager gives a request's pages back in table order, not sorted:
`free([3, 5, 3])` passes the check, page 3 goes on the free list twice, and two later requests
get it."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"generated: 200 runs of allocate and free, the invariant checked after each step"}
MUST_SAY = "a page twice, apart"
CAUGHT_BY = {"generated"}
HINT_SAYS = "wherever the two are in the list"


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
        for i, p in enumerate(pages):
            if i > 0 and pages[i - 1] == p:
                raise ValueError(f"page {p} twice in one call")
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
        for p in pages:
            self.in_use.discard(p)
            self.free_list.append(p)
