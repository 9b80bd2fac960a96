"""Pops pages one by one and raises OutOfPages when the list runs dry. The pages popped before
that are lost: a failed allocate must take nothing (the scheduler may try again later)."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"out of pages"}
MUST_SAY = "must not take any page"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "check n against the free count before taking anything"


class PageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.free_list = list(range(num_pages))
        self.in_use = set()

    @property
    def num_free(self):
        return len(self.free_list)

    def allocate(self, n):
        pages = []
        for _ in range(n):
            if not self.free_list:
                raise OutOfPages(f"asked for {n} pages")
            pages.append(self.free_list.pop())
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
