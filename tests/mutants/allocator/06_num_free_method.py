"""Writes num_free as a plain method. The cache manager reads `allocator.num_free` as a number;
a bound method compares as never equal and never smaller than anything."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "free and reuse"}
MUST_SAY = "make it a property"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "put @property above def num_free(self)"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages))
        self.in_use = set()

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
            self.free_list.append(p)
