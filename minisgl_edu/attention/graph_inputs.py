"""One host-to-device copy for everything a decode graph reads (CUDA only).

Where this sits on the request path: `CudaGraphRunner.run`, before each replay of a captured
decode graph. A graph reads its requests' page-table rows (to fetch each input token from
`Engine.last_tokens`), positions and KV slots, and, for an attention backend whose kernels read
them from here (the Triton decode backend), each request's length and page list. Sent as several
small tensors, each costs the host a pinned allocation and a copy call, and at batch 1 the host's
share of a step is as long as the GPU's. Here they are one int64 buffer with fixed offsets,
written with numpy into page-locked memory and copied in one call; the graph's kernels read views
of its device twin:

    rows[MB] | positions[MB] | out_loc[MB] | ids[MB] | lens[PB] | indptr[PB + 1] | page ids ...

(MB = the largest graph's batch size, PB = the largest batch whose page lists travel here,
`AttentionBackend.graph_page_rows`; a batch of b requests fills the first b entries of each.)

A step writes the first three (`write`; a token-row graph also the input tokens, `ids`), the
backend may add the page lists (`write_pages`, in `prepare_for_replay`), then `send` copies what
was written. Two host buffers take turns: overlap scheduling writes step N+1's inputs while step
N may not have been copied yet, so before a buffer is written again, the event recorded after its
last copy is waited on (long done, in practice: it is two steps old).
"""

from __future__ import annotations

import torch


class PackedGraphInputs:
    def __init__(self, max_bs: int, page_rows: int, max_pages_per_req: int, device: torch.device) -> None:
        self.max_bs = mb = max_bs
        self.page_rows = pb = page_rows
        self.lens_at = 4 * mb
        self.indptr_at = self.lens_at + pb
        self.pages_at = self.indptr_at + pb + 1  # where the page ids start
        size = self.pages_at + pb * max_pages_per_req
        self.device_buf = torch.zeros(size, dtype=torch.int64, device=device)
        # Fixed views: the captured kernels read these addresses.
        self.rows, self.positions, self.out_loc, self.ids = (self.device_buf[i * mb : (i + 1) * mb] for i in range(4))
        self.lens = self.device_buf[self.lens_at : self.indptr_at]
        self.indptr = self.device_buf[self.indptr_at : self.pages_at]
        self.indices = self.device_buf[self.pages_at :]
        self._host = [torch.zeros(size, dtype=torch.int64).pin_memory() for _ in range(2)]
        self._np = [h.numpy() for h in self._host]
        self._copied: list[torch.cuda.Event | None] = [None, None]
        self._turn = 0
        self._end = 0  # entries of the current host buffer written so far

    def write(self, rows: list[int], positions: list[int], out_loc: list[int], ids: list[int] | None = None) -> None:
        """Start a step: one entry per request of the graph (per token of a token-row graph),
        padding included. `ids`: the input tokens, which only a token-row graph reads from here."""
        i = self._turn
        if self._copied[i] is not None:
            self._copied[i].synchronize()
        a, mb, bs = self._np[i], self.max_bs, len(rows)
        a[0:bs] = rows
        a[mb : mb + bs] = positions
        a[2 * mb : 2 * mb + bs] = out_loc
        if ids is not None:
            a[3 * mb : 3 * mb + bs] = ids
        self._end = 4 * mb

    def write_pages(self, lens: list[int], pages: list[list[int]]) -> None:
        """Each request's KV length and page ids (pages[b], in order), padding included."""
        a, bs = self._np[self._turn], len(lens)
        assert bs <= self.page_rows, "this batch's page lists do not travel in the packed copy"
        a[self.lens_at : self.lens_at + bs] = lens
        end = self.pages_at
        a[self.indptr_at] = 0
        for b, p in enumerate(pages):
            a[end : end + len(p)] = p
            end += len(p)
            a[self.indptr_at + b + 1] = end - self.pages_at
        self._end = end

    def send(self) -> None:
        """Queue the copy of what this step wrote on the current stream."""
        i, self._turn = self._turn, 1 - self._turn
        self.device_buf[: self._end].copy_(self._host[i][: self._end], non_blocking=True)
        if self._copied[i] is None:
            self._copied[i] = torch.cuda.Event()
        self._copied[i].record()
