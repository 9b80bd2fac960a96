"""Frees with `while pages: ...` over a list it never shortens. The first free() never returns;
the case must fail on its time limit, not hang the grader."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "did not finish within"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "free() must return: go through the pages it is given once"
TIME_LIMIT = 1.0


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
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        i = 0
        while pages:
            p = pages[i % len(pages)]
            if p in self.in_use:
                self.in_use.remove(p)
                self.free_list.append(p)
            i += 1
