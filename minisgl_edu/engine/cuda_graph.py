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

The graphs of at most 4 requests, which run our own decode attention, go further
(`run_packed`), because at batch 1 the host's work per step is as long as the GPU's: their
inputs arrive in one host-to-device copy (`graph_inputs.py`), and the graph itself fetches each
request's input token from `Engine.last_tokens`, picks the greedy token (argmax) and writes it
back there, so the step has no small kernels of its own around the replay. With "greedy" in
`MINISGL_EDU_TRITON` (the default) those last steps, the float32 logits, the argmax and the write
to `last_tokens`, are one kernel (`kernels/greedy.py`).

Prefill batches (variable token counts) always run eagerly. Graphs share one memory pool, so the
largest is captured first and the smaller ones reuse its memory.
"""

from __future__ import annotations

import bisect
import time

import torch

from minisgl_edu import kernels
from minisgl_edu.attention.flashinfer_backend import pinned
from minisgl_edu.engine.graph_inputs import PackedGraphInputs


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
        # Sizes whose attention is our SplitKVDecode take their inputs packed (see the docstring).
        self.packed_sizes = {bs for bs, w in self.wrappers.items() if hasattr(w, "use_buffers")}
        self.packed = None
        if self.packed_sizes:
            self.packed = PackedGraphInputs(max(self.packed_sizes), engine.page_table.max_pages_per_req, dev)
            for bs in self.packed_sizes:
                self.wrappers[bs].use_buffers(self.packed.indptr[: bs + 1], self.packed.indices, self.packed.lens[:bs])
        self.greedy_heads = {}  # packed sizes: logits, argmax and last_tokens in one kernel
        if self.packed_sizes and kernels.enabled("greedy"):
            from minisgl_edu.kernels.greedy import GreedyHead

            self.greedy_heads = {bs: GreedyHead(bs, dev) for bs in self.packed_sizes}
        self.dummy_row = engine.page_table.max_reqs  # Engine.last_tokens has one spare entry for padding
        self.dummy_page = engine.pool.dummy_page
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.logits: dict[int, torch.Tensor] = {}
        self.tokens: dict[int, torch.Tensor] = {}  # packed sizes: the greedy tokens, picked in the graph
        t0 = time.perf_counter()
        self._capture()
        self.capture_seconds = time.perf_counter() - t0

    def _forward(self, bs: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        if bs not in self.packed_sizes:
            hidden = self.model(self.input_ids[:bs], self.positions[:bs], self.attn)
            return self.model.compute_logits(hidden), None
        rows = self.packed.rows[:bs]
        ids = self.engine.last_tokens.index_select(0, rows)  # each request's last sampled token
        hidden = self.model(ids, self.packed.positions[:bs], self.attn)
        if bs in self.greedy_heads:  # the LM head's output in the model dtype, then one kernel
            return self.greedy_heads[bs](self.model.lm_head.compute_logits(hidden), rows, self.engine.last_tokens)
        logits = self.model.compute_logits(hidden)
        tokens = torch.argmax(logits, dim=-1)  # greedy; other sampling overwrites it after the replay
        self.engine.last_tokens.index_copy_(0, rows, tokens)
        return logits, tokens

    def _plan_padding(self, bs: int) -> None:
        """An all-padding batch: every row is one token in the dummy page."""
        if bs in self.packed_sizes:
            self.packed.send([self.dummy_row] * bs, [0] * bs, [self.dummy_slot] * bs, [1] * bs,
                             [[self.dummy_page]] * bs)
            self.attn.bind_graph(self.wrappers[bs], self.packed.out_loc[:bs])
        else:
            self.attn.plan_graph(self.wrappers[bs], bs, None, [], self.out_loc[:bs])

    @torch.inference_mode()
    def _capture(self) -> None:
        pool = None
        with torch.cuda.stream(self.stream):
            for bs in reversed(self.bs_list):
                self._plan_padding(bs)
                for _ in range(2):  # warm up (cuBLAS handles, lazy init) outside the capture
                    self._forward(bs)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool, stream=self.stream):
                    self.logits[bs], self.tokens[bs] = self._forward(bs)
                pool = graph.pool()
                self.graphs[bs] = graph
        self.stream.synchronize()

    def can_run(self, batch_size: int) -> bool:
        return batch_size <= self.max_bs

    def packs(self, batch_size: int) -> bool:
        """Does a batch of this size run through `run_packed`?"""
        return self._size_for(batch_size) in self.packed_sizes

    def _size_for(self, b: int) -> int:
        return self.bs_list[bisect.bisect_left(self.bs_list, b)]

    def run_packed(self, ids: list[int] | None, positions: list[int], out_loc: list[int], rows: list[int],
                   kv_lens: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Replay a packed graph for len(rows) decode tokens; -> (logits [b, vocab], greedy tokens
        [b], the rows on the GPU). The greedy tokens are already in `Engine.last_tokens`.

        `ids` None: every request's input token is the one it sampled last, in `last_tokens`
        (overlap scheduling); otherwise they are written there first.
        """
        b = len(rows)
        bs = self._size_for(b)
        pad = bs - b
        table = self.engine.page_table.pages
        size = self.engine.page_size
        pages = [table[r][: (n + size - 1) // size] for r, n in zip(rows, kv_lens)]
        # Padding rows: token 0 at position 0 of the dummy page, tokens kept in the spare row.
        self.packed.send(rows + [self.dummy_row] * pad, positions + [0] * pad, out_loc + [self.dummy_slot] * pad,
                         kv_lens + [1] * pad, pages + [[self.dummy_page]] * pad)
        if ids is not None:
            self.engine.last_tokens.index_copy_(0, self.packed.rows[:b], pinned(ids, torch.int64).to(
                self.engine.device, non_blocking=True))
        self.attn.bind_graph(self.wrappers[bs], self.packed.out_loc[:bs])
        self.graphs[bs].replay()
        return self.logits[bs][:b], self.tokens[bs][:b], self.packed.rows[:b]

    def run(self, ids: torch.Tensor, positions: list[int], out_loc: list[int], rows: list[int],
            kv_lens: list[int]) -> torch.Tensor:
        """Replay the graph for len(positions) decode tokens; -> their logits [b, vocab]."""
        b = len(positions)
        bs = self._size_for(b)
        assert bs not in self.packed_sizes, "this size takes run_packed"
        pad = bs - b
        self.input_ids[:b].copy_(ids)
        # Padding rows must write to the dummy slot, never to whatever a previous batch left here.
        self.positions[:bs].copy_(pinned(positions + [0] * pad, torch.int64), non_blocking=True)
        self.out_loc[:bs].copy_(pinned(out_loc + [self.dummy_slot] * pad, torch.int64), non_blocking=True)
        self.attn.plan_graph(self.wrappers[bs], bs, rows, kv_lens, self.out_loc[:bs])
        self.graphs[bs].replay()
        return self.logits[bs][:b]
