"""CUDA graphs for decode batches: one launch for the whole forward pass.

Where this sits on the request path: inside `Engine.forward_batch`, for decode batches only. A
decode step of a small model is a few hundred tiny kernels (about 15 per layer); at batch 1 the
GPU finishes each one faster than Python can launch the next, so the step costs the *launch*
time. A CUDA graph records the launches once and replays them with one call.

A graph replays fixed kernels on fixed addresses with fixed shapes. So:

* we capture one graph per batch size in `batch_sizes(max_bs)` (1, 2, 4, 8, 12, 16, 24, 32, then
  every 16) and run a batch of b requests in the graph of the next size up, padding it;
* inputs live in static buffers (`input_ids`, `positions`, `out_loc`) that are refilled before
  each replay, and the attention kernel reads its page lists from buffers owned by the FlashInfer
  backend (`plan_graph` refills them: planning happens on the CPU, outside the graph);
* padding rows get token 0 at position 0, write their K/V to the pool's dummy page and attend to
  one token there: harmless work whose output is dropped.

Prefill batches (variable token counts) always run eagerly. Graphs share one memory pool, so the
largest is captured first and the smaller ones reuse its memory.
"""

from __future__ import annotations

import bisect
import time

import torch

from minisgl_edu.attention.flashinfer_backend import pinned


def batch_sizes(max_bs: int) -> list[int]:
    sizes = [b for b in [1, 2, 4, 8, 12, 16, 24, 32] if b <= max_bs]
    sizes += list(range(48, max_bs + 1, 16))
    if not sizes or sizes[-1] != max_bs:
        sizes.append(max_bs)
    return sizes


class CudaGraphRunner:
    def __init__(self, engine, max_bs: int) -> None:
        self.engine = engine
        self.model = engine.model
        self.attn = engine.attn
        self.stream = engine.stream
        self.bs_list = batch_sizes(max_bs)
        self.max_bs = self.bs_list[-1]
        dev = engine.device
        self.dummy_slot = engine.pool.dummy_page * engine.pool.page_size
        self.input_ids = torch.zeros(self.max_bs, dtype=torch.int64, device=dev)
        self.positions = torch.zeros(self.max_bs, dtype=torch.int64, device=dev)
        self.out_loc = torch.full((self.max_bs,), self.dummy_slot, dtype=torch.int64, device=dev)
        self.attn.init_graph_buffers(self.max_bs)
        self.wrappers = {bs: self.attn.graph_wrapper(bs) for bs in self.bs_list}
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.logits: dict[int, torch.Tensor] = {}
        t0 = time.perf_counter()
        self._capture()
        self.capture_seconds = time.perf_counter() - t0

    def _forward(self, bs: int) -> torch.Tensor:
        hidden = self.model(self.input_ids[:bs], self.positions[:bs], self.attn)
        return self.model.compute_logits(hidden)

    @torch.inference_mode()
    def _capture(self) -> None:
        pool = None
        with torch.cuda.stream(self.stream):
            for bs in reversed(self.bs_list):
                # An all-padding batch: every row is one token in the dummy page.
                self.attn.plan_graph(self.wrappers[bs], bs, None, [], self.out_loc[:bs])
                for _ in range(2):  # warm up (cuBLAS handles, lazy init) outside the capture
                    self._forward(bs)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool, stream=self.stream):
                    self.logits[bs] = self._forward(bs)
                pool = graph.pool()
                self.graphs[bs] = graph
        self.stream.synchronize()

    def can_run(self, batch_size: int) -> bool:
        return batch_size <= self.max_bs

    def run(self, ids: torch.Tensor, positions: list[int], out_loc: list[int], rows: list[int],
            kv_lens: list[int]) -> torch.Tensor:
        """Replay the graph for len(positions) decode tokens; -> their logits [b, vocab]."""
        b = len(positions)
        bs = self.bs_list[bisect.bisect_left(self.bs_list, b)]
        pad = bs - b
        self.input_ids[:b].copy_(ids)
        # Padding rows must write to the dummy slot, never to whatever a previous batch left here.
        self.positions[:bs].copy_(pinned(positions + [0] * pad, torch.int64), non_blocking=True)
        self.out_loc[:bs].copy_(pinned(out_loc + [self.dummy_slot] * pad, torch.int64), non_blocking=True)
        self.attn.plan_graph(self.wrappers[bs], bs, rows, kv_lens, self.out_loc[:bs])
        self.graphs[bs].replay()
        return self.logits[bs][:b]
