"""Checks every page before freeing any (good), against the set of pages in use as it was before
the call. `free([p, p])` passes the check twice and puts p on the free list twice: the next two
allocations both get page p, and two requests write the same KV memory."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"the same page twice in one free()"}
MUST_SAY = "must raise ValueError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a page listed twice in the same call raises ValueError"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages))
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
        self.in_use.difference_update(pages)
        self.free_list.extend(pages)
