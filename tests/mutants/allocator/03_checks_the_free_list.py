"""Refuses a page that is already on the free list, which catches a plain double free, but
accepts ids that were never pages at all (4 of 4 pages, -1): they join the free list and are
handed out later, outside the KV pool."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out"}
MUST_SAY = "page 4 of an allocator of 4 pages"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an id that is not a page (-1, num_pages) raises ValueError"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages))

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages, self.free_list = self.free_list[:n], self.free_list[n:]
        return pages

    def free(self, pages):
        for p in pages:
            if p in self.free_list:
                raise ValueError(f"page {p} freed twice")
            self.free_list.append(p)
