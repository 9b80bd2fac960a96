"""allocate() takes the last n pages with a correct copy, `self.free_list[len(self.free_list) - n:]`,
but removes them with `del self.free_list[-n:]`. For n = 0, -0 is 0 and `del free_list[0:]` empties the
whole free list: allocate(0) rightly returns [] but every free page is lost (neither free nor in use),
and num_free drops to 0. allocate(0) happens whenever a step's tokens fit in a request's last page."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "allocate(0) takes nothing",
    "many steps in random order",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "allocate(0) must take nothing"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "mind slices like free[-n:] when n is 0"


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
        pages = self.free_list[len(self.free_list) - n :][::-1]
        del self.free_list[-n:]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
