"""The FlashInfer attention backend: paged attention kernels for NVIDIA GPUs.

Where this sits on the request path: the same place as the torch backend (every attention layer
of the model calls `forward`), over the very same paged KV pool and page table. Only the way of
attending differs: instead of gathering every request's K/V into a padded tensor, FlashInfer's
kernels read the pages in place, given a CSR-style description of the batch:

    kv_indptr[b] .. kv_indptr[b+1]   the slice of kv_indices that holds request b's pages, in order
    kv_indices                       page ids (the page-table rows, concatenated)
    kv_last_page_len[b]              how many tokens of request b's last page are used (1..page_size)
    qo_indptr[b]                     where request b's new tokens start in the flat q (prefill only)

`prepare()` builds these once per batch and calls the wrapper's `plan()` (FlashInfer splits the
work over the GPU's SMs on the CPU side, once); `forward()` runs the planned kernel per layer.
A decode batch (one new token per request) uses `BatchDecodeWithPagedKVCacheWrapper`; anything
else (prefill, chunked prefill, prefill after a prefix-cache hit, a mixed batch of prompt chunks
and decode tokens) uses `BatchPrefillWithPagedKVCacheWrapper` with a causal mask, which FlashInfer
aligns to the *end* of each request's KV, exactly like the torch backend's "causal with an
offset". `qo_indptr` gives each request its own q length, so a mixed batch's decode rows are
simply requests with one new token that attends to its whole KV.

The pool stores K as [num_layers, (num_pages + 1) * page_size, Hkv, D]; viewed per layer as
[num_pages + 1, page_size, Hkv, D] it is FlashInfer's "NHD" paged layout, so no copy is needed.

CUDA graphs (see `engine/cuda_graph.py`) need fixed addresses: `init_graphs` makes one decode
wrapper per captured batch size whose index arrays live in preallocated buffers, and
`prepare_for_replay` plans into them, padding the batch to the captured size with requests of one
token that live in the pool's dummy page. (On CUDA the default pairs this backend with our Triton
decode kernel for batches of at most 4 requests: `hybrid.py`, `triton_backend.py`.)

A replay's plan is on the host's critical path at every decode step, and `wrapper.plan()` spends
most of its time in Python around the planner (argument checks, dtype lookups, and a Python
`max()` over a tensor of lengths). A graph wrapper that has been planned once is therefore
re-planned by `_replan`: our page lists written into its buffers, then FlashInfer's planner
called directly. That calls members of the wrapper that are not its public API, so it is used only
with the FlashInfer versions it was checked against (`REPLAN_CHECKED`); any other version
plans through `wrapper.plan()`.

An FP8 pool (`kv_cache_dtype="fp8_e4m3"`, `kvcache/pool.py`) carries a scale per token and KV
head, which FlashInfer's kernels cannot take (they take one per layer). Over such a pool this
backend attends after dequantizing: each layer's pages of the batch are read back in the model's
dtype into a scratch paged buffer, page i of the batch's page list at scratch page i, and the plan
points at those. That costs a read and a write of the batch's pages per layer, fine for prefill
(compute-bound); decode batches go to our FP8 kernel instead (`triton_backend.py`), and this
backend captures no graphs over an FP8 pool.

This module imports flashinfer at construction time: it is only ever built on a CUDA machine.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata
from minisgl_edu.host_copy import host_tensor
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool

WORKSPACE_BYTES = 128 * 1024 * 1024  # FlashInfer's recommended float workspace (split-KV partials)
# "fa2" for prefill shares its JIT-compiled module with tensor-core decode, and compiles once per
# machine (~90 s); "auto" would pick FA3 on Hopper: another compile, and no faster here.
PREFILL_BACKEND = "fa2"
# FlashInfer versions whose tensor-core decode plan `_replan` repeats (tests/test_gpu.py compares
# the two plans' results).
REPLAN_CHECKED = ("0.6.6",)


def pinned(values: list[int], dtype: torch.dtype) -> torch.Tensor:
    """A small host tensor in page-locked memory (FlashInfer's plans read their lengths on the host)."""
    return host_tensor(values, dtype, "cuda")


class FlashInferBackend(AttentionBackend):
    supports_graphs = True

    def __init__(
        self,
        pool: KVPool,
        page_table: PageTable,
        scale: Optional[float] = None,
        num_qo_heads: Optional[int] = None,
        decode_tensor_cores: bool = True,
    ) -> None:
        import flashinfer  # only here: FlashInfer exists only on CUDA machines

        self.flashinfer = flashinfer
        self.pool = pool
        self.page_table = page_table
        self.scale = scale
        self.device = pool.k.device
        self.page_size = pool.page_size
        self.num_kv_heads = pool.num_kv_heads
        self.head_dim = pool.head_dim
        self.dtype = pool.dtype  # what q is and what the kernels read (an FP8 pool: after dequantizing)
        self.supports_graphs = not pool.quantized
        self._batch_pages: Optional[torch.Tensor] = None  # FP8 pool: the batch's page list, on the GPU
        self.num_qo_heads = num_qo_heads  # known from the first q if not given
        # FlashInfer has two decode kernels: a CUDA-core one (one program per request and KV head)
        # and the tensor-core prefill kernel run with one query row per request, whose plan also
        # splits long contexts into chunks, so it balances mixed context lengths better
        # (`EngineConfig.decode_tensor_cores`).
        self.use_tensor_cores = decode_tensor_cores
        # One float workspace for every wrapper: kernels run one after another on one stream.
        self.workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=self.device)
        self.prefill_wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(
            self.workspace, "NHD", backend=PREFILL_BACKEND
        )
        self._decode_wrapper = None  # made at the first eager (not graph-captured) decode batch
        # Per-layer paged views of the pool: [num_pages + 1, page_size, Hkv, D], no copy.
        shape = (-1, self.page_size, self.num_kv_heads, self.head_dim)
        self.kv_views = [(pool.k[i].view(shape), pool.v[i].view(shape)) for i in range(pool.num_layers)]
        self._wrapper = None  # the planned wrapper the next forward() runs
        self._meta: Optional[AttentionMetadata] = None
        self._plan_events: dict[int, torch.cuda.Event] = {}
        self._graph_wrappers: dict[int, object] = {}  # made by `init_graphs`
        self._planned: set[int] = set()  # graph sizes planned once by wrapper.plan()
        self.fast_replan = decode_tensor_cores and flashinfer.__version__ in REPLAN_CHECKED

    # ------------------------------------------------------------------ helpers
    @property
    def decode_wrapper(self):
        if self._decode_wrapper is None:
            self._decode_wrapper = self.flashinfer.BatchDecodeWithPagedKVCacheWrapper(
                self.workspace, "NHD", use_tensor_cores=self.use_tensor_cores
            )
        return self._decode_wrapper

    def _page_indices(self, rows: list[int], num_pages: list[int], pad: int = 0) -> torch.Tensor:
        """kv_indices in page-locked host memory: request b's first num_pages[b] pages of row
        rows[b], in order.

        Built on the host from the page table's host copy (one gather of the rows' used columns,
        one mask) and sent in a single non-blocking copy by the caller: cheaper for the host than
        the half a dozen small GPU kernels of a device-side gather, and no GPU kernel at all.
        `pad` extra entries point at the dummy page (CUDA-graph padding).
        """
        host = self.page_table.host_table
        counts = torch.tensor(num_pages, dtype=torch.int64)
        width = max(num_pages, default=0)
        block = host[torch.tensor(rows, dtype=torch.int64), :width]  # [B, width]
        indices = block[torch.arange(width) < counts[:, None]]  # row-major: request by request
        if pad:
            indices = torch.cat([indices, torch.full((pad,), self.pool.dummy_page, dtype=indices.dtype)])
        return indices.pin_memory()

    def _describe(self, kv_lens: list[int], pad: int = 0) -> tuple[list[int], list[int], list[int]]:
        """num_pages, kv_indptr, kv_last_page_len (host lists), plus `pad` one-token requests."""
        p = self.page_size
        num_pages = [(n + p - 1) // p for n in kv_lens]
        indptr = [0]
        for n in num_pages + [1] * pad:
            indptr.append(indptr[-1] + n)
        last = [n - (k - 1) * p for n, k in zip(kv_lens, num_pages)] + [1] * pad
        return num_pages, indptr, last

    def _wait_previous_plan(self, wrapper) -> None:
        # plan() stages its schedule in a page-locked host buffer that belongs to the wrapper and
        # copies it to the GPU asynchronously. Before the same wrapper plans again (overlap
        # scheduling plans batch N+1 while batch N runs), that earlier copy must be done.
        ev = self._plan_events.get(id(wrapper))
        if ev is not None:
            ev.synchronize()

    def _record_plan(self, wrapper) -> None:
        ev = self._plan_events.get(id(wrapper))
        if ev is None:
            ev = self._plan_events[id(wrapper)] = torch.cuda.Event()
        ev.record()

    # ------------------------------------------------------------------ eager batches
    def prepare(self, meta: AttentionMetadata) -> None:
        if self.num_qo_heads is None:
            self._meta = meta  # plan lazily at the first forward(), when q tells the head count
            self._wrapper = None
            self.out_loc = meta.out_loc
            return
        self._plan(meta)

    def _plan(self, meta: AttentionMetadata) -> None:
        num_pages, indptr, last = self._describe(meta.kv_lens)
        indices = self._page_indices(meta.host_rows(), num_pages).to(self.device, non_blocking=True)
        if self.pool.quantized:  # plan over the scratch pages of `_dequantized`: page i is indices[i]
            self._batch_pages = indices.long()
            indices = torch.arange(len(indices), dtype=torch.int32, device=self.device)
        is_decode = meta.is_decode
        wrapper = self.decode_wrapper if is_decode else self.prefill_wrapper
        self._wait_previous_plan(wrapper)
        kv_indptr = pinned(indptr, torch.int32)
        kv_last = pinned(last, torch.int32)
        if is_decode:
            self._plan_decode(wrapper, kv_indptr, indices, kv_last)
        else:
            qo = [0]
            for q in meta.q_lens:
                qo.append(qo[-1] + q)
            wrapper.plan(
                pinned(qo, torch.int32),
                kv_indptr,
                indices,
                kv_last,
                self.num_qo_heads,
                self.num_kv_heads,
                self.head_dim,
                self.page_size,
                causal=True,
                q_data_type=self.dtype,
                kv_data_type=self.dtype,
                sm_scale=self.scale,
            )
        self._record_plan(wrapper)
        self._wrapper = wrapper
        self.out_loc = meta.out_loc
        self._meta = meta

    def _plan_decode(self, wrapper, kv_indptr: torch.Tensor, indices: torch.Tensor, kv_last: torch.Tensor) -> None:
        """FlashInfer's own plan of a decode wrapper (eager, or a graph's first plan)."""
        wrapper.plan(
            kv_indptr,
            indices,
            kv_last,
            self.num_qo_heads,
            self.num_kv_heads,
            self.head_dim,
            self.page_size,
            q_data_type=self.dtype,
            kv_data_type=self.dtype,
            sm_scale=self.scale,
        )

    def forward(self, layer_id: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self._wrapper is None:
            assert self._meta is not None, "prepare() must run before forward()"
            self.num_qo_heads = q.shape[1]
            self._plan(self._meta)
        if k is not None:  # None: already written by the caller
            self.pool.store(layer_id, self.out_loc, k, v)
        kv = self._dequantized(layer_id) if self.pool.quantized else self.kv_views[layer_id]
        return self._wrapper.run(q.contiguous(), kv)

    def _dequantized(self, layer_id: int) -> tuple[torch.Tensor, torch.Tensor]:
        """An FP8 pool's pages of this batch, in the model's dtype: [batch pages, page_size, Hkv, D]."""
        k, v = self.pool.load_pages(layer_id, self._batch_pages[None])
        shape = (-1, self.page_size, self.num_kv_heads, self.head_dim)
        return k.view(shape), v.view(shape)

    # ------------------------------------------------------------------ CUDA graphs
    def init_graphs(self, bs_list: list[int], inputs) -> None:
        """One decode wrapper per size, all reading slices of the same fixed-address index buffers."""
        dev, max_bs = self.device, max(bs_list)
        self._graph_indptr = torch.zeros(max_bs + 1, dtype=torch.int32, device=dev)
        self._graph_last = torch.zeros(max_bs, dtype=torch.int32, device=dev)
        # Every request of the batch may use its whole page-table row (shared prefix pages appear
        # once per request, so the pool size is not a bound).
        self._graph_indices = torch.zeros(max_bs * self.page_table.max_pages_per_req, dtype=torch.int32, device=dev)
        for bs in bs_list:
            self._graph_wrappers[bs] = self.flashinfer.BatchDecodeWithPagedKVCacheWrapper(
                self.workspace,
                "NHD",
                use_cuda_graph=True,
                use_tensor_cores=self.use_tensor_cores,
                paged_kv_indptr_buffer=self._graph_indptr[: bs + 1],
                paged_kv_indices_buffer=self._graph_indices,
                paged_kv_last_page_len_buffer=self._graph_last[:bs],
            )

    def prepare_for_replay(self, bs: int, rows: list[int], kv_lens: list[int], inputs) -> None:
        """Plan the graph wrapper of size `bs` (on the host, outside the graph). The padding
        requests have one token in the dummy page: they compute garbage that is never read, and
        never touch a real request's pages."""
        wrapper = self._graph_wrappers[bs]
        pad = bs - len(kv_lens)
        num_pages, indptr, last = self._describe(kv_lens, pad)
        if kv_lens:
            indices = self._page_indices(rows, num_pages, pad)
        else:
            indices = torch.full((pad,), self.pool.dummy_page, dtype=torch.int32).pin_memory()
        self._wait_previous_plan(wrapper)
        if self.fast_replan and bs in self._planned:
            self._replan(wrapper, indptr, indices, last, kv_lens + [1] * pad)
        else:
            device_indices = indices.to(self.device, non_blocking=True)
            self._plan_decode(wrapper, pinned(indptr, torch.int32), device_indices, pinned(last, torch.int32))
            self._planned.add(bs)
        self._record_plan(wrapper)
        self._wrapper = wrapper
        self.out_loc = inputs.out_loc[:bs]

    def _replan(self, wrapper, indptr: list[int], indices: torch.Tensor, last: list[int], kv_lens: list[int]) -> None:
        """What `wrapper.plan()` does for a graph wrapper of tensor-core decode that it has
        planned before, without the Python around it: the page lists go into the wrapper's
        buffers (ours, made in `init_graphs`), and FlashInfer's planner splits the batch's work
        into the wrapper's workspace. The wrapper's settings (dtypes, head sizes, the planner
        module) stay those of its first plan. Arguments as FlashInfer 0.6.6 passes them."""
        bs = len(last)
        indptr_host = pinned(indptr, torch.int32)
        self._graph_indptr[: bs + 1].copy_(indptr_host, non_blocking=True)
        self._graph_last[:bs].copy_(pinned(last, torch.int32), non_blocking=True)
        self._graph_indices[: len(indices)].copy_(indices, non_blocking=True)
        wrapper._max_kv_len = max(kv_lens)
        wrapper._plan_info = wrapper._cached_module.plan(
            wrapper._float_workspace_buffer,
            wrapper._int_workspace_buffer,
            wrapper._pin_memory_int_workspace_buffer,
            torch.arange(bs + 1, dtype=torch.int32),  # qo_indptr: one query row per request
            indptr_host,
            torch.tensor(kv_lens, dtype=torch.int32),
            bs,  # total query rows
            bs,  # requests
            self.num_qo_heads,
            self.num_kv_heads,
            self.page_size,
            True,  # planned for a CUDA graph: fixed grid, fixed buffers
            self.head_dim,
            self.head_dim,
            False,  # not causal: each row attends to its whole KV
            -1,  # no sliding window
            -1,  # split size chosen by the planner
            False,  # split-KV allowed
            0,  # no co-located CTAs
        )
