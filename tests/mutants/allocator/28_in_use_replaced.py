"""Records the pages of each allocate() with `self.in_use = set(pages)`, replacing the set instead of
adding to it. The pages in use are every page handed out and not yet freed; after this, only the
latest allocate()'s pages count, so freeing the pages of any earlier allocation raises ValueError
('freed twice') although they were never given back, and a request that finished first could not
return its pages."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "exact fit, then nothing left",
    "pages given back in any order",
    "many steps in random order",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "forgets the pages handed out by the ones before it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never replace them with the latest call's"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use = set(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
