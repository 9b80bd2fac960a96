"""Hands out pages from a counter and counts frees, but never reuses a freed id: after
`num_pages` allocations the ids run past the pool. num_free looks right, the ids are wrong."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "ids must come from range(4)"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "hand out the freed ids again"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.next_id = 0
        self.in_use = set()

    @property
    def num_free(self):
        return self.num_pages - len(self.in_use)

    def allocate(self, n):
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
