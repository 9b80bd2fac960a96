"""On an exact fit (n equal to the pages free) allocate returns its own free list instead of a new
list, then clears that free list. The caller holds the very list that was cleared, so it gets no
pages at all, and the pages counted in use can never be freed by it. allocate must return a new
list of the pages it took; the allocator's own list keeps changing after allocate returns."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "allocate(0) takes nothing", "free and reuse"}
MUST_SAY = "the allocator's own list"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not the allocator's own list (self.free_list)"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        if n and n == len(self.free_list):
            pages = self.free_list
            self.in_use.update(pages)
            self.free_list.clear()
            return pages
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
