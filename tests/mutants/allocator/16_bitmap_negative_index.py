"""Keeps a list of flags, one per page, and checks `self.used[p]` before freeing (an id past the
end raises IndexError, which it turns into ValueError). Python reads `self.used[-1]` as the last
page's flag: while the last page is in use, `free([-1])` is accepted, -1 joins the free list and
is handed out later as a page id. The hand case frees -1 once while page 3 of 4 is free (refused)
and once while it is in use (accepted here)."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "free of a page never handed out",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "page -1, while page 3 (the last) is in use"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a list or array indexed with -1 reads the last page's entry"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.used = [False] * num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        for p in pages:
            self.used[p] = True
        return pages

    def free(self, pages):
        for p in pages:
            try:
                in_use = self.used[p]
            except IndexError:
                raise ValueError(f"{p} is not a page id") from None
            if not in_use:
                raise ValueError(f"page {p} is not in use")
            self.used[p] = False
            self.free_list.append(p)
