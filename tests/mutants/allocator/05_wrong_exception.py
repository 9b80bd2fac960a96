"""Raises MemoryError when pages run out. The scheduler and the cache manager catch OutOfPages
(the engine's own error for this), so a MemoryError crashes the scheduler process instead."""

from minisgl_edu.kvcache import OutOfPages  # noqa: F401  (imported, then not used)

MUST_FAIL = {"out of pages"}
MUST_SAY = "raise OutOfPages"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "raise OutOfPages (from minisgl_edu.kvcache.allocator)"


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
            raise MemoryError(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
