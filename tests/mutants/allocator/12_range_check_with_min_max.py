"""Checks the ids of a free() with min(pages) and max(pages) first. For free([]) min() raises
ValueError ("arg is an empty sequence"), so giving back no pages, which the cache manager does
whenever a request has no page of its own to return, is refused as if it were a bad free."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free([]) gives back nothing"}
MUST_SAY = "free([])"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an empty list is a valid free() that changes nothing"


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
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        if min(pages) < 0 or max(pages) >= self.num_pages:
            raise ValueError(f"{pages!r}: not page ids")
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
