"""Raises OutOfPages as soon as no page is free, before looking at n. allocate(0) with every page
handed out then fails, although it asks for nothing: the cache manager asks for 0 new pages
whenever the tokens of a step fit in a request's last page, and the pool is often full."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"exact fit, then nothing left"}
MUST_SAY = "asks for nothing"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "refuse only when n > num_free: allocate(0) always fits"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if not self.free_list or n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
