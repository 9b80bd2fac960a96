"""Hands out pages round a ring: the next n ids after the last one handed out, wrapping at
num_pages, and counts the free pages. Right while requests give their pages back in the order
they got them; when a later request finishes first, the ring comes round to pages that an earlier
request still holds, and hands them out a second time."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"pages given back in any order"}
MUST_SAY = "still holds"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "take only pages that are free now"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.head = 0
        self.free_count = num_pages
        self.in_use = set()

    @property
    def num_free(self):
        return self.free_count

    def allocate(self, n):
        if n > self.free_count:
            raise OutOfPages(f"asked for {n} pages, {self.free_count} free")
        pages = [(self.head + i) % self.num_pages for i in range(n)]
        self.head = (self.head + n) % self.num_pages
        self.free_count -= n
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_count += 1
