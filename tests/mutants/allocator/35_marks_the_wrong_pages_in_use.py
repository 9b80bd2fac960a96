"""allocate() cuts the pages it returns off the free list, then marks `self.free_list[:n]` in use:
read after the list was shortened, those are the next n free pages, not the ones handed out. The
pages returned are never marked in use, so freeing them raises ValueError ('freed twice'), while
pages still on the free list count as in use."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "free and reuse",
    "pages given back in any order",
    "many steps in random order",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "the pages allocate() marks in use are not the pages it returns"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "mark as in use exactly the pages it returns"


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
        pages, self.free_list = self.free_list[:n], self.free_list[n:]
        self.in_use.update(self.free_list[:n])
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
