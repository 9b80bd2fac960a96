"""The cache manager: one place that hands out and takes back KV memory for a request.

Where this sits on the request path: the scheduler calls `admit()` when a request leaves the
waiting queue (it gets a page-table row and any cached prefix), `reserve()` before each forward
pass (pages for the tokens about to be computed), `trim()` after a verify step (speculative
decoding: pages that hold only rejected drafts), and `release()` when the request finishes or
is aborted (its pages go to the prefix cache or back to the free list, its row is freed).

Under the overlap loop a batch can still be running on the GPU when one of its requests finishes
or is aborted: the loop `pin`s a batch's requests when it launches it and `unpin`s them when it
lands, and a `release()` of a pinned request waits until then, so that its pages are not handed
to a new request while the GPU still writes into them.
"""

from __future__ import annotations

from dataclasses import dataclass

from minisgl_edu.core import Req
from minisgl_edu.kvcache.allocator import OutOfPages, PageAllocator
from minisgl_edu.kvcache.naive_cache import NaiveCache
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool
from minisgl_edu.kvcache.radix_cache import RadixCache


def pages_for(num_tokens: int, page_size: int) -> int:
    return -(-num_tokens // page_size)


@dataclass
class PageMapSnapshot:
    """Who owns each page, for the course's page-map widget."""

    num_pages: int
    page_size: int
    owner: list[int | None]  # uid of the running request that owns the page, else None
    cached: list[bool]  # the page is in the prefix cache (possibly shared)
    rows: dict[int, list[int]]  # uid -> its pages in order (the page-table row)


class CacheManager:
    def __init__(self, pool: KVPool, page_table: PageTable, cache: str = "radix") -> None:
        self.pool = pool
        self.page_size = pool.page_size
        self.allocator = PageAllocator(pool.num_pages)
        self.page_table = page_table
        page_table.reset()  # rows left by an earlier manager on the same engine are not ours
        # Used only through match_prefix, lock, unlock, insert, evict, num_evictable, num_cached
        # and cached_pages. Exercise 6 of the course swaps its own radix cache in here before any
        # request (`cache.prefix_cache = RadixCache(page_size)`), as exercise 4 does `cache.allocator`.
        if cache == "radix":
            self.prefix_cache = RadixCache(self.page_size)
        elif cache == "naive":
            self.prefix_cache = NaiveCache(self.page_size)
        else:
            raise ValueError(f"unknown cache {cache!r} (choose 'radix' or 'naive')")
        self.uid_of_row: dict[int, int] = {}
        self._pins: dict[int, int] = {}  # id(req) -> batches in flight on the GPU that contain it
        self._deferred: list[tuple[Req, bool]] = []  # release() calls waiting for their batch to land

    # --- capacity ---------------------------------------------------------------------------
    @property
    def num_pages(self) -> int:
        return self.pool.num_pages

    @property
    def num_free(self) -> int:
        return self.allocator.num_free

    @property
    def num_available(self) -> int:
        """Pages a new request could get: free ones plus cached ones nobody is using."""
        return self.allocator.num_free + self.prefix_cache.num_evictable

    def held_pages(self, req: Req) -> int:
        return len(self.page_table.pages[req.table_idx]) if req.table_idx >= 0 else 0

    # --- the life of a request --------------------------------------------------------------
    def match(self, req: Req) -> tuple[object, list[int]]:
        # Leave at least one prompt token to compute: its logits give the first output token.
        return self.prefix_cache.match_prefix(req.input_ids[: len(req.input_ids) - 1])

    def admit(self, req: Req) -> None:
        """Give `req` a page-table row and its cached prefix pages."""
        handle, pages = self.match(req)
        self.prefix_cache.lock(handle)
        req.cache_handle = handle
        req.table_idx = self.page_table.alloc_row()
        self.uid_of_row[req.table_idx] = req.uid
        self.page_table.append(req.table_idx, pages)
        req.prefix_len = req.cached_len = len(pages) * self.page_size

    def reserve(self, req: Req, upto_len: int) -> None:
        """Make sure `req` has pages for its first `upto_len` tokens (evicting cached ones if needed)."""
        need = pages_for(upto_len, self.page_size) - self.held_pages(req)
        if need <= 0:
            return
        if need > self.allocator.num_free:
            self.allocator.free(self.prefix_cache.evict(need - self.allocator.num_free))
        if need > self.allocator.num_free:
            raise OutOfPages(f"request {req.uid} needs {need} pages, {self.allocator.num_free} free")
        self.page_table.append(req.table_idx, self.allocator.allocate(need))

    def trim(self, req: Req, pages: list[int]) -> list[int]:
        """Return `pages`, the last pages of `req`'s row, to the free list (speculative decoding:
        after a verify, the pages that hold only rejected drafts, as the verify step says). Refuses
        pages that are not the end of the row or that hold the request's cached prefix (those are
        the prefix cache's, perhaps shared): freeing them would corrupt other requests' K/V."""
        pages = list(pages)
        row = self.page_table.pages[req.table_idx]
        keep = len(row) - len(pages)
        if keep < 0 or row[keep:] != pages:
            raise ValueError(f"request {req.uid}: pages {pages} are not the last pages of its row {row}")
        if keep < max(req.prefix_len, req.shared_len) // self.page_size:
            raise ValueError(f"request {req.uid}: pages {pages} include its cached prefix's (the prefix cache's)")
        self.allocator.free(self.page_table.truncate(req.table_idx, keep))
        return pages

    def release(self, req: Req, cache_it: bool = True) -> None:
        """Give back everything `req` holds. Finished requests donate their full pages to the
        prefix cache; aborted ones (cache_it=False) return all their own pages to the free list.
        A pinned request (its batch is still on the GPU) is released when it is unpinned."""
        if self._pins.get(id(req)):
            self._deferred.append((req, cache_it))
            return
        if req.table_idx < 0:
            return  # never admitted (aborted while waiting)
        pages = self.page_table.pages[req.table_idx]
        # pages before this belong to the cache (a prefix hit, or (n > 1) handed over after prefill:
        # scheduler/prompt_sharing.py)
        own_from = max(req.prefix_len, req.shared_len) // self.page_size
        free_from = own_from  # the request's own pages from here on go back to the free list
        if cache_it:
            # The K/V of the last sampled token was never computed, so it is not cached.
            computed = req.all_ids[: req.cached_len]
            full = len(computed) // self.page_size  # >= own_from: the prefix is computed too
            existing = self.prefix_cache.insert(computed, pages[:full])
            # Pages the tree already had are duplicates; pages[existing:full] now belong to it.
            self.allocator.free(pages[own_from:existing])
            free_from = full
        self.allocator.free(pages[free_from:])
        self.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del self.uid_of_row[req.table_idx]
        self.page_table.free_row(req.table_idx)
        req.table_idx = -1

    # --- batches in flight (overlap_loop) ----------------------------------------------------
    def pin(self, reqs: list[Req]) -> None:
        """A batch with these requests was launched: the GPU will still write their K/V."""
        for req in reqs:
            self._pins[id(req)] = self._pins.get(id(req), 0) + 1

    def unpin(self, reqs: list[Req]) -> None:
        """That batch landed: carry out the releases that waited for it (and for no other batch)."""
        for req in reqs:
            self._pins[id(req)] -= 1
            if not self._pins[id(req)]:
                del self._pins[id(req)]
        waiting, self._deferred = self._deferred, []
        for req, cache_it in waiting:
            self.release(req, cache_it)  # still pinned by a later batch: deferred again

    @property
    def num_deferred(self) -> int:
        return len(self._deferred)

    # --- inspection -------------------------------------------------------------------------
    def snapshot(self) -> PageMapSnapshot:
        owner: list[int | None] = [None] * self.num_pages
        rows: dict[int, list[int]] = {}
        for row in self.page_table.used_rows():
            uid = self.uid_of_row[row]
            rows[uid] = list(self.page_table.pages[row])
            for p in rows[uid]:
                owner[p] = uid
        cached = [False] * self.num_pages
        for p in self.prefix_cache.cached_pages():
            cached[p] = True
        return PageMapSnapshot(self.num_pages, self.page_size, owner, cached, rows)

    def check(self) -> None:
        """Every page is exactly one of: free, owned by a running request, in the prefix cache."""
        cached = self.prefix_cache.cached_pages()
        owned: set[int] = set()
        for row in self.page_table.used_rows():
            owned.update(self.page_table.pages[row])
        used = self.allocator.used_pages()
        assert used == cached | owned, "a page is allocated but nobody holds it (leak)"
        assert self.allocator.num_free + len(used) == self.num_pages


__all__ = ["CacheManager", "OutOfPages", "PageMapSnapshot", "pages_for"]
