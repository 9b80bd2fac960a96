"""One host-to-device copy for everything a small decode graph reads (CUDA only).

Where this sits on the request path: `CudaGraphRunner.run_packed`, before each replay of the
captured graphs that use our decode attention (at most 4 requests, `kernels/decode_attention.py`).
Such a graph reads its requests' page-table rows (to fetch the input token from
`Engine.last_tokens`), positions, KV slots, lengths and page lists. Sent as six small tensors,
each costs the host a pinned allocation and a copy call, and at batch 1 the host's share of a
step was as long as the GPU's (docs/benchmarks.md). Here they are one int64 buffer with fixed
offsets, written with numpy into page-locked memory and copied in one call; the graph's kernels
read views of its device twin:

    rows[MB] | positions[MB] | out_loc[MB] | lens[MB] | indptr[MB + 1] | page ids ...

(MB = the largest packed batch size; a batch of b requests fills the first b entries of each.)

Two host buffers take turns. Overlap scheduling writes step N+1's inputs while step N may not
have been copied yet, so before a buffer is written again, the event recorded after its last copy
is waited on (long done, in practice: it is two steps old).
"""

from __future__ import annotations

import torch


class PackedGraphInputs:
    def __init__(self, max_bs: int, max_pages_per_req: int, device: torch.device) -> None:
        self.max_bs = mb = max_bs
        self.pages_at = 5 * mb + 1  # where the page ids start
        size = self.pages_at + mb * max_pages_per_req
        self.device_buf = torch.zeros(size, dtype=torch.int64, device=device)
        # Fixed views: the captured kernels read these addresses.
        self.rows, self.positions, self.out_loc, self.lens = (self.device_buf[i * mb: (i + 1) * mb] for i in range(4))
        self.indptr = self.device_buf[4 * mb: 5 * mb + 1]
        self.indices = self.device_buf[self.pages_at:]
        self._host = [torch.zeros(size, dtype=torch.int64).pin_memory() for _ in range(2)]
        self._np = [h.numpy() for h in self._host]
        self._copied: list[torch.cuda.Event | None] = [None, None]
        self._turn = 0

    def send(self, rows: list[int], positions: list[int], out_loc: list[int], lens: list[int],
             pages: list[list[int]]) -> None:
        """Queue the copy of one batch's inputs on the current stream (every list: one entry per
        request, padding included; pages[b]: request b's page ids, in order)."""
        i, self._turn = self._turn, 1 - self._turn
        if self._copied[i] is not None:
            self._copied[i].synchronize()
        a, mb, bs = self._np[i], self.max_bs, len(rows)
        a[0:bs] = rows
        a[mb: mb + bs] = positions
        a[2 * mb: 2 * mb + bs] = out_loc
        a[3 * mb: 3 * mb + bs] = lens
        end = self.pages_at
        a[4 * mb] = 0
        for b, p in enumerate(pages):
            a[end: end + len(p)] = p
            end += len(p)
            a[4 * mb + b + 1] = end - self.pages_at
        self.device_buf[:end].copy_(self._host[i][:end], non_blocking=True)
        if self._copied[i] is None:
            self._copied[i] = torch.cuda.Event()
        self._copied[i].record()
