"""Numbers the pages from 1 (range(1, num_pages + 1)) instead of from 0. Page num_pages is not a
page (the KV cache has rows 0 .. num_pages - 1 only, so writing it goes out of bounds), and page 0,
a real page, is never handed out."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages"}
MUST_SAY = "are not page ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "page ids are 0 .. num_pages - 1: ids [10] are not page ids"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages, 0, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
