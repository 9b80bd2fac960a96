"""Keeps the set of pages in use in the class body, so every allocator shares it. Each scheduler
(and each test) builds its own allocator; their pages then mix, and a page of one is refused or
accepted by the other."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"two allocators are independent"}
MUST_SAY = "shared by every object"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "state on self, set in __init__"


class PageAllocator:
    in_use = set()

    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages))

    @property
    def num_free(self):
        return self.num_pages - len(self.in_use)

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
