"""Takes the set of pages in use as a default argument of __init__ (`in_use=set()`). A default is
built once, when the def line runs, so every allocator built without that argument shares one set:
a page another allocator holds counts as in use here too, and freeing it is accepted."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out", "two allocators are independent"}
MUST_SAY = "share their pages in use"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not as a default argument"


class PageAllocator:
    def __init__(self, num_pages, in_use=set()):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = in_use

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
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
