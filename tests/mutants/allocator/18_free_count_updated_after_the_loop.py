"""Keeps num_free as a counter beside the free list, and in free() adds `len(pages)` to it once,
after the loop over the pages. When a free() is refused part-way (a page freed twice, listed twice
or not a page id), the pages before the bad one are already back on the free list, as the contract
allows, but the counter never hears of them: num_free then reports fewer free pages than there are,
for good (the cache manager admits fewer requests, and a later allocate of every free page is
refused). On 4 pages: allocate(2) gives [0, 1]; free([0, 0]) raises ValueError with page 0 back on
the free list; num_free should be 3, this answer's is 2. No page is lost: the count is wrong."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "a refused free() loses no page",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "but num_free never counted it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "add one as each page goes back"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()
        self.num_free = num_pages

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        self.num_free -= n
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
        self.num_free += len(pages)
