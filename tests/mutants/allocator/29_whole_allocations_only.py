"""Remembers the pages of each allocate() as one group, and free() takes back a group only whole, as
allocate() handed it out (in any order). The contract lets any pages in use come back in any grouping:
a request whose row got shorter gives back part of its pages, and one call may return pages of
several allocations. Here those frees raise ValueError although every page of them is in use."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "free and reuse",
    "many steps in random order",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "takes back only whole allocations"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "in any grouping: part of one allocation"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.handed_out = []  # the pages of each allocate(), as a set

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        if pages:
            self.handed_out.append(set(pages))
        return pages

    def free(self, pages):
        pages = list(pages)
        if not pages:
            return
        if len(set(pages)) != len(pages) or set(pages) not in self.handed_out:
            raise ValueError(f"pages {pages} were not handed out together")
        self.handed_out.remove(set(pages))
        self.free_list.extend(pages)
