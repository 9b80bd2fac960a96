"""The page table: for each running request (a row, `table_idx`), its pages in order.

Where this sits on the request path: a request gets a row when the scheduler admits it and
loses it when it finishes or is aborted. The attention backend reads the table (as a tensor) to
find where token `i` of a request lives: page `table[row, i // page_size]`, offset
`i % page_size`.
"""

from __future__ import annotations

import torch

from minisgl_edu.host_copy import host_tensor


class PageTable:
    def __init__(self, max_reqs: int, max_pages_per_req: int, device: torch.device | str, fill: int) -> None:
        self.max_reqs = max_reqs
        self.max_pages_per_req = max_pages_per_req
        # `fill` is the pool's dummy page, so unused entries point at harmless memory.
        self.fill = fill
        self.table = torch.full((max_reqs, max_pages_per_req), fill, dtype=torch.int32, device=device)
        # A copy in host memory when the table lives on a GPU: the FlashInfer backend builds each
        # batch's page list from it on the host and sends it in one copy (one small transfer
        # instead of a handful of gather kernels per step). On CPU it is the table itself.
        self.host_table = self.table if not self.table.is_cuda else torch.full_like(self.table, fill, device="cpu")
        self.pages: list[list[int]] = [[] for _ in range(max_reqs)]
        self._free_rows: list[int] = list(range(max_reqs - 1, -1, -1))

    def reset(self) -> None:
        """Every row free again (a new cache manager starts from an empty table)."""
        self.table.fill_(self.fill)
        self.host_table.fill_(self.fill)
        self.pages = [[] for _ in range(self.max_reqs)]
        self._free_rows = list(range(self.max_reqs - 1, -1, -1))

    @property
    def num_free_rows(self) -> int:
        return len(self._free_rows)

    def alloc_row(self) -> int:
        if not self._free_rows:
            raise RuntimeError("no free page-table row")
        return self._free_rows.pop()

    def free_row(self, row: int) -> None:
        if row in self._free_rows:
            raise ValueError(f"page-table row {row} freed twice")
        self.pages[row] = []
        self.table[row].fill_(self.fill)
        self.host_table[row].fill_(self.fill)
        self._free_rows.append(row)

    def append(self, row: int, pages: list[int]) -> None:
        if not pages:
            return
        start = len(self.pages[row])
        if start + len(pages) > self.max_pages_per_req:
            raise ValueError("request longer than the page table allows")
        self.pages[row].extend(pages)
        # Page-locked on CUDA, so the overlap loop's host never waits for the stream here.
        src = host_tensor(pages, torch.int32, self.table.device)
        self.table[row, start : start + len(pages)].copy_(src, non_blocking=True)
        if self.host_table is not self.table:
            self.host_table[row, start : start + len(pages)] = src

    def truncate(self, row: int, num_pages: int) -> list[int]:
        """Keep the first `num_pages` pages of `row`; return the ones removed (for the free list)."""
        removed = self.pages[row][num_pages:]
        if removed:
            del self.pages[row][num_pages:]
            self.table[row, num_pages : num_pages + len(removed)].fill_(self.fill)
            if self.host_table is not self.table:
                self.host_table[row, num_pages : num_pages + len(removed)] = self.fill
        return removed

    def slots(self, row: int, start: int, end: int, page_size: int) -> list[int]:
        """Pool slots of positions start..end-1 of the request in `row` (pages must be there)."""
        pages = self.pages[row]
        return [pages[i // page_size] * page_size + i % page_size for i in range(start, end)]

    def used_rows(self) -> list[int]:
        free = set(self._free_rows)
        return [r for r in range(self.max_reqs) if r not in free]
