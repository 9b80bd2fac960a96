"""CUDA graphs for decode batches and short prefills: one launch for the whole forward pass.

Where this sits on the request path: the engine's runner on CUDA (the second of
`Engine.forward_batch`'s three steps, chosen when the engine is built), for decode batches, and for
prefill and verify batches of few tokens (the token-row graphs at the end of this text). A
decode step of a small model is a few hundred tiny kernels (about 15 per layer); at batch 1 the
GPU finishes each one faster than Python can launch the next, so the step costs the *launch*
time. A CUDA graph records the launches once and replays them with one call.

A graph replays fixed kernels on fixed addresses with fixed shapes. So:

* we capture one graph per batch size in `batch_sizes(max_bs)` (1, 2, 4, 8, 12, 16, 24, 32, then
  every 16) and run a batch of b requests in the graph of the next size up, padding it;
* the step's inputs (page-table rows, positions, KV slots, and the page lists of a backend that
  reads them there) arrive in one host-to-device copy into fixed buffers (`attention/graph_inputs.py`);
  the attention backend prepares each replay through its graph hooks (`AttentionBackend.
  init_graphs`, `prepare_for_replay`: FlashInfer plans on the host, outside the graph);
* the graph itself fetches each request's input token from `Engine.last_tokens`, picks the greedy
  token (argmax) and writes it back there, so the step has no small kernels of its own around the
  replay; other sampling runs after the replay and overwrites it. In graphs of at most
  `greedy.MAX_BS` requests, with "greedy" in `EngineConfig.triton_kernels`, those last steps (the
  float32 logits, the argmax and the write to `last_tokens`) are one kernel (`kernels/greedy.py`);
* padding rows read token 0 from a spare entry of `last_tokens`, sit at position 0, write their
  K/V to the pool's dummy page and attend to one token there: harmless work whose output is dropped.

Short prefills and verify batches (speculative decoding, `verify.py`) replay graphs of their own,
"token-row" graphs. A request that computes n tokens at positions p .. p+n-1 (a prompt of n tokens,
or its last token and n-1 drafts) is, for attention, n decode rows on the same page-table row, with
lengths p+1 .. p+n: all K/V of a layer are stored before any row attends, so row j sees the tokens
before it and none after. So a token-row graph of size n runs n such rows through the same
attention plan as a decode graph of size n; what differs is that its input tokens come from the
host (`PackedGraphInputs.ids`), and it returns the hidden state of every row and writes nothing
back: the engine computes the logits of the rows it samples from (a prompt's last token; every
row of a verify) after the replay.

Why: a prefill of a short prompt is not bound by its kernels but by launching them (hundreds of
them, from Python, for every layer); replayed, it costs what its kernels cost. But a row re-reads
its whole context, where a prefill kernel reads each page once for all of a request's tokens; so
only a batch whose rows read few tokens in all replays one (`CudaGraphRunner.can_run_rows`, at
most `ROW_GRAPH_MAX_READS`); longer ones run eagerly, where the launches are a small share.
Graphs share one memory pool, so the largest is captured first and the smaller ones reuse its
memory.
"""

from __future__ import annotations

import bisect
import gc
import time

import torch

from minisgl_edu.attention.graph_inputs import PackedGraphInputs
from minisgl_edu.engine.forward_inputs import ForwardInputs
from minisgl_edu.engine.runner import EagerRunner, RunOutput

# A batch replays a token-row graph only if its rows read at most this many K/V tokens in all (the
# sum of the rows' lengths): a 512-token prompt reads 131k. Past that, a row graph's repeated reads
# of the context cost more than the launches it saves (measured: docs/benchmarks.md, "Short prefills").
ROW_GRAPH_MAX_READS = 1 << 18


def batch_sizes(max_bs: int) -> list[int]:
    sizes = [b for b in [1, 2, 4, 8, 12, 16, 24, 32] if b <= max_bs]
    sizes += list(range(48, max_bs + 1, 16))
    if not sizes or sizes[-1] != max_bs:
        sizes.append(max_bs)
    return sizes


class CudaGraphRunner:
    """The engine's runner on CUDA with graphs: `run` replays a captured graph where one fits the
    batch, and hands the other batches to `eager` (`runner.py`)."""

    def __init__(self, engine, eager: EagerRunner, max_bs: int, greedy_kernel: bool = True) -> None:
        self.engine = engine
        self.eager = eager
        self.model = engine.model
        self.attn = engine.attn
        self.stream = engine.stream
        self.bs_list = batch_sizes(max_bs)
        self.max_bs = self.bs_list[-1]
        dev = engine.device
        self.dummy_slot = engine.pool.dummy_page * engine.pool.page_size
        self.dummy_row = engine.page_table.max_reqs  # Engine.last_tokens has one spare entry for padding
        self.dummy_page = engine.pool.dummy_page
        self.inputs = PackedGraphInputs(
            self.max_bs, self.attn.graph_page_rows(self.bs_list), engine.page_table.max_pages_per_req, dev
        )
        self.attn.init_graphs(self.bs_list, self.inputs)
        self.greedy_heads = {}  # small sizes: logits, argmax and last_tokens in one kernel
        if greedy_kernel:
            from minisgl_edu.kernels.greedy import MAX_BS, GreedyHead

            self.greedy_heads = {bs: GreedyHead(bs, dev) for bs in self.bs_list if bs <= MAX_BS}
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.logits: dict[int, torch.Tensor] = {}
        self.tokens: dict[int, torch.Tensor] = {}  # the greedy tokens, picked in the graph
        # token-row graphs (short prefills, verify batches), and the hidden state of each row
        self.row_graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.row_hidden: dict[int, torch.Tensor] = {}
        t0 = time.perf_counter()
        self._capture()
        self.capture_seconds = time.perf_counter() - t0

    def _forward(self, bs: int) -> tuple[torch.Tensor, torch.Tensor]:
        """What a graph of size `bs` records: -> (float32 logits [bs, vocab], greedy tokens [bs])."""
        rows = self.inputs.rows[:bs]
        ids = self.engine.last_tokens.index_select(0, rows)  # each request's last sampled token
        hidden = self.model(ids, self.inputs.positions[:bs], self.attn)
        if bs in self.greedy_heads:  # the LM head's output in the model dtype, then one kernel
            return self.greedy_heads[bs](self.model.lm_head.compute_logits(hidden), rows, self.engine.last_tokens)
        logits = self.model.compute_logits(hidden)
        tokens = torch.argmax(logits, dim=-1)  # greedy; other sampling overwrites it after the replay
        self.engine.last_tokens.index_copy_(0, rows, tokens)
        return logits, tokens

    def _forward_rows(self, bs: int) -> torch.Tensor:
        """What a token-row graph of `bs` rows records: -> hidden states [bs, hidden]."""
        return self.model(self.inputs.ids[:bs], self.inputs.positions[:bs], self.attn)

    def _prepare(
        self,
        bs: int,
        rows: list[int],
        positions: list[int],
        out_loc: list[int],
        kv_lens: list[int],
        ids: list[int] | None = None,
    ) -> None:
        """Write and send the inputs of a replay of size `bs`: len(rows) real rows, then padding."""
        pad = bs - len(rows)
        self.inputs.write(
            rows + [self.dummy_row] * pad,
            positions + [0] * pad,
            out_loc + [self.dummy_slot] * pad,
            None if ids is None else ids + [0] * pad,
        )
        if rows:
            self.attn.prepare_for_replay(bs, rows, kv_lens, self.inputs)
        else:
            self.attn.prepare_for_capture(bs, self.inputs)
        self.inputs.send()

    @torch.inference_mode()
    def _capture(self) -> None:
        # No garbage collection while a graph records: a collection there can run the finalizer of
        # some earlier object that calls CUDA (frees an event, a graph, page-locked memory), which
        # is not allowed during a capture and spoils it ("operation failed due to a previous error
        # during capture", at whichever launch comes next). SGLang keeps the collector out of a capture
        # too (`freeze_gc` in its graph runner).
        enabled = gc.isenabled()
        gc.disable()
        try:
            self._capture_all()
        finally:
            if enabled:
                gc.enable()

    def _capture_all(self) -> None:
        pool = None
        with torch.cuda.stream(self.stream):
            for bs in reversed(self.bs_list):
                self._prepare(bs, [], [], [], [])  # an all-padding batch
                for _ in range(2):  # warm up (cuBLAS handles, lazy init) outside the capture
                    self._forward(bs)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool, stream=self.stream):
                    self.logits[bs], self.tokens[bs] = self._forward(bs)
                pool = graph.pool()
                self.graphs[bs] = graph
            for bs in reversed(self.bs_list):
                self._prepare(bs, [], [], [], [], ids=[])
                self._forward_rows(bs)  # warm up outside the capture
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool, stream=self.stream):
                    self.row_hidden[bs] = self._forward_rows(bs)
                self.row_graphs[bs] = graph
        self.stream.synchronize()

    def can_run(self, batch_size: int) -> bool:
        return batch_size <= self.max_bs

    def _size_for(self, b: int) -> int:
        return self.bs_list[bisect.bisect_left(self.bs_list, b)]

    def run(self, inputs: ForwardInputs) -> RunOutput:
        """Replay a graph where one fits the batch: a decode graph for a decode batch, a token-row
        graph for a batch of few tokens all on the host; run any other batch eagerly."""
        if inputs.is_decode and all(inputs.sampled) and self.can_run(len(inputs.rows)):
            return RunOutput(*self.replay_decode(inputs))
        if not inputs.from_device and self.can_run_rows(inputs.positions):
            hidden = self.run_rows(inputs.ids, inputs.positions, inputs.out_loc, inputs.token_rows)
            return RunOutput(self.eager.logits(hidden, inputs))
        return self.eager.run(inputs)

    def replay_decode(self, inputs: ForwardInputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Replay the decode graph for a batch of len(inputs.rows) decode tokens; -> (logits
        [b, vocab], greedy tokens [b]). The greedy tokens are already in `Engine.last_tokens`.

        Every input token is the one its request sampled last, read from `last_tokens` in the graph.
        """
        rows = inputs.rows
        b = len(rows)
        bs = self._size_for(b)
        self._prepare(bs, rows, inputs.positions, inputs.out_loc, inputs.kv_lens)
        self.graphs[bs].replay()
        return self.logits[bs][:b], self.tokens[bs][:b]

    def can_run_rows(self, positions: list[int]) -> bool:
        """Can a batch of these token positions replay a token-row graph? Enough graph rows, and few
        K/V reads in all (row i reads positions[i] + 1 tokens)."""
        return len(positions) <= self.max_bs and sum(positions) + len(positions) <= ROW_GRAPH_MAX_READS

    def run_rows(self, ids: list[int], positions: list[int], out_loc: list[int], rows: list[int]) -> torch.Tensor:
        """Replay the token-row graph for len(ids) tokens (`rows[i]`: the page-table row of the
        request that token i belongs to); -> their hidden states [n, hidden]. Nothing is written to
        `Engine.last_tokens`."""
        n = len(ids)
        bs = self._size_for(n)
        self._prepare(bs, rows, positions, out_loc, [p + 1 for p in positions], ids=ids)
        self.row_graphs[bs].replay()
        return self.row_hidden[bs][:n]
