"""The Triton decode attention backend: our split-KV kernel for decode batches of a few requests.

Where this sits on the request path: the decode half of the CUDA default
`attention_backend = "flashinfer,triton"` (`hybrid.py`): every attention layer of a decode batch of
at most `decode_attention.MAX_BS` requests calls `forward`, which runs `kernels/decode_attention.py`
over the same paged pool and page table as the other backends. It only decodes (one new token per
request); prefill and larger decode batches go to the other half of the hybrid.

Why a backend of its own for small batches: at batch 1 a layer's attention reads little, and the
cost is in kernels and host work. FlashInfer's graph-mode decode is two kernels per layer and a
`plan()` on the host before every step; this is one kernel, and in a CUDA graph its page lists
arrive in the graph runner's one input copy (`attention/graph_inputs.py`): no plan at all.

One `SplitKVDecode` per batch size (its split count and partial-result buffers depend on it): in
a graph it reads the page lists from the runner's packed buffer (`init_graphs`), eagerly from
buffers of its own that `prepare` fills.

Over an FP8 pool (`kv_cache_dtype="fp8_e4m3"`) the kernel is `kernels/decode_attention_fp8.py`'s,
and it takes decode batches of every size (`max_decode_batch` None): FlashInfer cannot read our
per-token scales, and at a large batch the halved bytes are the gain.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata
from minisgl_edu.host_copy import host_tensor
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool


class TritonDecodeBackend(AttentionBackend):
    supports_graphs = True

    def __init__(self, pool: KVPool, page_table: PageTable, num_qo_heads: int, scale: Optional[float] = None) -> None:
        # Imports Triton: only ever built where it runs.
        from minisgl_edu.kernels import decode_attention, decode_attention_fp8

        self.pool = pool
        if pool.quantized:
            self._kernel_class, self.max_decode_batch = decode_attention_fp8.SplitKVDecodeFP8, None
        else:
            self._kernel_class, self.max_decode_batch = decode_attention.SplitKVDecode, decode_attention.MAX_BS
        self.page_table = page_table
        self.num_qo_heads = num_qo_heads
        self.scale = scale or pool.head_dim**-0.5
        self.device = pool.k.device
        # Per-layer views of the pool, one row per token slot: [slots, Hkv, D] (and an FP8 pool's
        # scales, [slots, Hkv]).
        self.kv_views = [
            (pool.k[i], pool.v[i], pool.k_scale[i], pool.v_scale[i]) if pool.quantized else (pool.k[i], pool.v[i])
            for i in range(pool.num_layers)
        ]
        # Eager batches: page ids of all requests back to back, shared by every size.
        max_bs = self.max_decode_batch or page_table.max_reqs
        self._indices = torch.zeros(max_bs * page_table.max_pages_per_req, dtype=torch.int32, device=self.device)
        self._eager: dict[int, object] = {}
        self._graphs: dict[int, object] = {}
        self._active = None

    def _kernel(self, bs: int, indices: torch.Tensor):
        return self._kernel_class(
            bs, self.num_qo_heads, self.pool.num_kv_heads, self.pool.head_dim, self.pool.page_size, self.scale, indices
        )

    def _host(self, values: list[int]) -> torch.Tensor:
        return host_tensor(values, torch.int32, self.device)

    def prepare(self, meta: AttentionMetadata) -> None:
        assert meta.is_decode and (self.max_decode_batch is None or meta.batch_size <= self.max_decode_batch), (
            "a decode batch of at most MAX_BS"
        )
        bs, p = meta.batch_size, self.pool.page_size
        kernel = self._eager.get(bs)
        if kernel is None:
            kernel = self._eager[bs] = self._kernel(bs, self._indices)
        num_pages = [(n + p - 1) // p for n in meta.kv_lens]
        indptr, pages = [0], []
        for row, n in zip(meta.host_rows(), num_pages):
            pages += self.page_table.pages[row][:n]
            indptr.append(len(pages))
        indices = self._host(pages).to(self.device, non_blocking=True)
        kernel.plan(self._host(indptr), indices, self._host(list(meta.kv_lens)))
        self._active = kernel
        self.out_loc = meta.out_loc

    def forward(
        self, layer_id: int, q: torch.Tensor, k: Optional[torch.Tensor], v: Optional[torch.Tensor]
    ) -> torch.Tensor:
        if k is not None:  # None: the caller wrote them already
            self.pool.store(layer_id, self.out_loc, k, v)
        return self._active.run(q.contiguous(), self.kv_views[layer_id])

    # ------------------------------------------------------------------ CUDA graphs
    def graph_page_rows(self, bs_list: list[int]) -> int:
        return max(bs_list)

    def init_graphs(self, bs_list: list[int], inputs) -> None:
        for bs in bs_list:
            kernel = self._kernel(bs, inputs.indices)
            kernel.use_buffers(inputs.indptr[: bs + 1], inputs.indices, inputs.lens[:bs])
            self._graphs[bs] = kernel

    def prepare_for_replay(self, bs: int, rows: list[int], kv_lens: list[int], inputs) -> None:
        p, pad = self.pool.page_size, bs - len(rows)
        table = self.page_table.pages
        pages = [table[r][: (n + p - 1) // p] for r, n in zip(rows, kv_lens)]
        inputs.write_pages(list(kv_lens) + [1] * pad, pages + [[self.pool.dummy_page]] * pad)
        self._active = self._graphs[bs]
        self.out_loc = inputs.out_loc[:bs]
