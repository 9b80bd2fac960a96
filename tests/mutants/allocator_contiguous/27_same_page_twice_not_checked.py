"""Checks every page of the call against the pages in use before freeing any (good), but never looks
for the same page twice in one call. free([0, 0]) passes the check twice (page 0 is in use, and
nothing is freed yet), then the second copy fails in set.remove with KeyError instead of ValueError,
after the first copy was freed: the caller gets an exception it does not catch, and the call has
changed the allocator."""

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: bad frees change nothing", "stretch: many steps against the reference"}
MUST_SAY = "a check against the pages in use lets both copies through"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "also refuse a repeat within the list"


class ContiguousPageAllocator:
    def __init__(self, num_pages):
        self.num_pages = num_pages
        self.by_start = {0: num_pages} if num_pages else {}
        self.by_end = {num_pages: 0} if num_pages else {}
        self.in_use = set()

    @property
    def num_free(self):
        return self.num_pages - len(self.in_use)

    @property
    def runs(self):
        return sorted(self.by_start.items())

    def _take(self, start, count):
        length = self.by_start.pop(start)
        del self.by_end[start + length]
        if count < length:
            self.by_start[start + count] = length - count
            self.by_end[start + length] = start + count
        return list(range(start, start + count))

    def allocate(self, n):
        if n > self.num_free:
            raise OutOfPages(f"{n} > {self.num_free}")
        pages = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                pages += self._take(min(fitting)[1], need)
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())
                pages += self._take(start, self.by_start[start])
        self.in_use.update(pages)
        return sorted(pages)

    def free(self, pages):
        pages = list(pages)
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
        for p in pages:
            self.in_use.remove(p)
            start, length = p, 1
            if p in self.by_end:
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
