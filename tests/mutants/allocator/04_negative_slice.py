"""Takes the last n pages with `free_list[-n:]`. For n = 0 that slice is the whole list, so
allocate(0) hands out every page."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate(0) takes nothing"}
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
        pages = self.free_list[-n:]
        del self.free_list[-n:]
        self.in_use.update(pages)
        return pages

    def free(self, pages):
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
