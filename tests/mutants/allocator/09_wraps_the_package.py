"""Keeps a package PageAllocator inside and forwards every call to it. Correct, and not the
student's own code."""

from minisgl_edu.kvcache import allocator

MUST_FAIL = {"allocate distinct pages", "double free"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"hand", "generated"}


class PageAllocator:
    def __init__(self, num_pages):
        self._inner = allocator.PageAllocator(num_pages)

    @property
    def num_free(self):
        return self._inner.num_free

    def allocate(self, n):
        return self._inner.allocate(n)

    def free(self, pages):
        self._inner.free(pages)


HINT_SAYS = "write the answer without calling, subclassing or keeping"
