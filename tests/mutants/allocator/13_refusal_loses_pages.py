"""Checks each page and takes it out of the pages in use, and puts the whole list on the free list
after the loop. When a page in the middle of the list is refused, the pages before it are neither
in use nor free any more: they are lost for good, and the pool shrinks with every bad free."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"a refused free() loses no page"}
MUST_SAY = "lost"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "took pages out of use and raised before putting them on the free list"


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
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
        self.free_list.extend(pages)
