"""free([]) raises ValueError ("nothing to free"). The contract allows an empty list: giving back no
pages is not an error, and the cache manager frees an empty list whenever a request has no page of
its own to return (a request whose whole prompt was cached, or one that never got a page), so the
engine stops on a call that should have changed nothing."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free([]) gives back nothing"}
MUST_SAY = "free([])"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an empty list is a valid free() that changes nothing"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
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
        if not pages:
            raise ValueError("nothing to free")
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
