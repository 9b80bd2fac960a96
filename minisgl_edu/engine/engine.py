"""The engine: runs one batch through the model and samples the next tokens.

Where this sits on the request path: the scheduler decides *which* tokens to compute (a
`Batch`) and has reserved KV pages for them; `Engine.forward_batch` turns the batch into flat
tensors (token ids, positions, the KV slots to write), plans attention once, runs the model, and
samples one token for every request whose known tokens are now all computed. The engine also owns
the memory: the model weights, the paged KV pool and the page table.

With tensor parallelism (`config.tp_size` > 1) every rank runs its own Engine on the same batches:
its model holds 1/tp of the weights and its KV pool 1/tp of the KV heads (see
`minisgl_edu.distributed`); the logits, and so the sampled tokens, are the same on every rank.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Optional

import torch

from minisgl_edu.attention import AttentionMetadata, create_backend
from minisgl_edu.core import Batch
from minisgl_edu.engine.config import EngineConfig, resolve_device, resolve_dtype
from minisgl_edu.engine.logits_chain import needs_chain
from minisgl_edu.engine.logprobs import BatchLogprobs, TokenLogprobs, take_logprobs
from minisgl_edu.engine.sampler import Sampler
from minisgl_edu.engine.verify import verify
from minisgl_edu.kvcache import KVPool, PageTable, pages_for

CPU_MAX_RUNNING = 32  # the CPU's default running-request limit: 2 cores gain nothing from more
# CUDA: the default limit is the number of requests the KV pool holds at this many tokens each
# (prompt and output), between CPU_MAX_RUNNING and GPU_MAX_RUNNING. An H200 holds ~1M tokens of
# Qwen3-0.6B, so 256; a small GPU's pool gives fewer, and admission never reserves past the pool.
AUTO_TOKENS_PER_REQUEST = 2048
GPU_MAX_RUNNING = 256  # also the default largest CUDA graph (`cuda_graph_max_bs`)


@dataclass
class ForwardOutput:
    """The new tokens of each batch item, in order: none for a prompt chunk that leaves part of its
    prompt to compute, one otherwise; for an item that verified k drafts, the model's token at each
    of its positions (k+1 with greedy decoding), of which the scheduler's verify step keeps 1 to
    k+1. With each token its logprobs where the request asked for them (else None)."""

    tokens: list[list[int]]
    logprobs: list[list[Optional[TokenLogprobs]]]


class Engine:
    def __init__(self, config: EngineConfig) -> None:
        from minisgl_edu.distributed import check_tp_size, get_tp_rank, get_tp_size
        from minisgl_edu.models import ModelConfig, load_model, resolve_model

        self.config = config
        self.tp_rank, self.tp_size = get_tp_rank(), config.tp_size
        if get_tp_size() != self.tp_size:
            raise RuntimeError(
                f"tp_size={self.tp_size}, but this process is one of {get_tp_size()} tensor-parallel "
                f"ranks: each rank runs in its own process and calls minisgl_edu.distributed.init_tp "
                f"first (the server does it: python -m minisgl_edu.serve --tp {self.tp_size})"
            )
        self.device = resolve_device(config.device)
        if self.device.type == "cuda" and self.tp_size > 1:
            self.device = torch.device("cuda", self.tp_rank)  # rank i drives GPU i
        self.dtype = resolve_dtype(config.dtype, self.device)
        torch.manual_seed(config.seed)
        t0 = time.perf_counter()
        self.model_path = resolve_model(config.model)
        # Before loading any weight: a tp that cannot split the heads fails with a clear message.
        if self.tp_size > 1:
            check_tp_size(ModelConfig.from_dir(self.model_path), self.tp_size)
        self.model, self.model_config = load_model(self.model_path, dtype=self.dtype, device=self.device)
        self.load_seconds = time.perf_counter() - t0
        mc = self.model_config
        # This rank's attention heads (all of them with one rank): its KV pool stores only these.
        self.num_kv_heads = mc.num_kv_heads // self.tp_size
        self.num_qo_heads = mc.num_heads // self.tp_size

        self.page_size = config.page_size
        num_pages = config.num_pages or self._auto_num_pages()
        self.pool = KVPool(
            mc.num_layers, num_pages, self.page_size, self.num_kv_heads, mc.head_dim, self.dtype, self.device
        )
        # Never beyond the model's context (its RoPE table ends there), nor beyond the whole cache.
        self.max_seq_len = min(
            config.max_seq_len or mc.max_position_embeddings, mc.max_position_embeddings, num_pages * self.page_size
        )
        self.page_table = PageTable(
            config.max_running_requests or self._auto_max_running(num_pages),  # a row per running request
            pages_for(self.max_seq_len, self.page_size),
            self.device,
            fill=self.pool.dummy_page,
        )
        backend = config.attention_backend
        if backend == "auto":
            backend = self._auto_backend()
        self.attn = create_backend(
            backend,
            self.pool,
            self.page_table,
            num_qo_heads=self.num_qo_heads,
            decode_tensor_cores=config.decode_tensor_cores,
        )
        self.attention_backend = backend
        # The model's modules were built plain; on CUDA in half precision the faster variants
        # (models/cuda_layers.py), on CPU with `cpu_weights` other than "float32" the packed
        # matmuls (models/cpu_layers.py), are swapped in now, once, as the settings say.
        packed = self.device.type == "cpu" and self.dtype == torch.float32 and config.cpu_weights != "float32"
        if self.device.type == "cuda" and self.dtype in (torch.bfloat16, torch.float16):
            from minisgl_edu.models.cuda_layers import use_cuda_layers

            use_cuda_layers(self.model, fused=config.fused_kernels, triton=config.triton_kernels)
        elif packed:
            from minisgl_edu.models.cpu_layers import int4_is_fast, use_cpu_layers

            if config.cpu_weights == "int4" and not int4_is_fast():
                raise ValueError(
                    "cpu_weights='int4' runs torch's int4 CPU matmul, which is fast only with AVX512-BF16, "
                    "and this CPU has none: use cpu_weights='float16'"
                )
            # float16 or int4 weights ("auto" decided here), float32 math between the matmuls
            cpu_weights = use_cpu_layers(self.model, config.cpu_weights)
        # What the server's ready line says the weights are.
        self.weights = str(self.dtype).removeprefix("torch.")
        if packed:
            self.weights = {
                "float16": "float16 weights, float32 math",
                "int4": "int4 layer weights with bfloat16 matmul inputs, float16 logits, float32 math",
            }[cpu_weights]
        self.sampler = Sampler()
        # The token each page-table row sampled last, kept where the model runs: the overlap loop
        # feeds it to the row's next decode step before the host has even seen it.
        # One spare entry at the end, for the padding rows of CUDA graphs (cuda_graph.py).
        self.last_tokens = torch.zeros(self.page_table.max_reqs + 1, dtype=torch.int64, device=self.device)
        # CUDA only: a stream of our own for the forward passes (so the scheduler's small
        # synchronous copies on the default stream never wait for a running batch), and CUDA
        # graphs for decode batches. The CPU path makes no CUDA call at all.
        self.stream = None
        self.graph_runner = None
        if self.device.type == "cuda":
            self.stream = torch.cuda.Stream(self.device)
            if self.attn.supports_graphs and config.cuda_graph_max_bs > 0:
                from minisgl_edu.engine.cuda_graph import CudaGraphRunner
                from minisgl_edu.kernels import triton_available

                self.graph_runner = CudaGraphRunner(
                    self,
                    min(config.cuda_graph_max_bs, self.page_table.max_reqs),
                    greedy_kernel="greedy" in config.triton_kernels and triton_available(),
                )

    def _auto_backend(self) -> str:
        """torch on CPU; on CUDA with FlashInfer, FlashInfer plus our Triton decode kernel for small
        decode batches when Triton is there and the kernel takes this model's heads."""
        if self.device.type != "cuda" or not _has_flashinfer():
            return "torch"
        from minisgl_edu.kernels import triton_available

        if triton_available():
            from minisgl_edu.kernels import decode_attention

            if decode_attention.supports(self.num_qo_heads, self.num_kv_heads, self.model_config.head_dim):
                return "flashinfer,triton"
        return "flashinfer"

    def _auto_max_running(self, num_pages: int) -> int:
        if self.device.type != "cuda":
            return CPU_MAX_RUNNING
        fits = num_pages * self.page_size // AUTO_TOKENS_PER_REQUEST
        return max(CPU_MAX_RUNNING, min(GPU_MAX_RUNNING, fits))

    def _auto_num_pages(self) -> int:
        mc = self.model_config
        per_token = KVPool.bytes_per_token(mc.num_layers, self.num_kv_heads, mc.head_dim, self.dtype)
        if self.device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device)
            tokens = int(free * self.config.memory_fraction) // per_token
        else:
            tokens = self.config.max_total_tokens
        return max(tokens // self.page_size, 1)

    @torch.inference_mode()
    def forward_batch(self, batch: Batch) -> ForwardOutput:
        """Run `batch` and wait for its tokens (what `Scheduler.step()` and `normal_loop` use)."""
        return self.launch_batch(batch).result()

    @torch.inference_mode()
    def launch_batch(self, batch: Batch, ids_on_device: bool = False) -> "PendingForward":
        """Start `batch`; return a handle whose `result()` waits for the sampled tokens.

        On CPU everything is done before this returns. On CUDA the work is only *queued* on the
        engine's stream, and no step here waits for the GPU, so the scheduler can prepare the next
        batch meanwhile (overlap scheduling). With `ids_on_device`, the input token of a decode
        item is read from `last_tokens` (the token this request's previous batch sampled, still
        on the GPU) instead of from `req.output_ids`, which the overlap loop fills in later; in a
        mixed batch that is true of its decode items, while its prompt chunks come from the host.
        """
        if self.stream is None:
            n = self.config.cpu_single_thread_decode
            if batch.is_decode and len(batch.items) <= n and torch.get_num_threads() > 1:
                # A decode step of a few requests is a chain of small ops. Split between threads,
                # each op also waits for the other threads to wake; on a machine whose cores the
                # server's other processes and a client share, that wait is longer than the work.
                with _torch_threads(1):
                    return self._forward_now(batch, ids_on_device)
            return self._forward_now(batch, ids_on_device)
        # Work the scheduler queued on the default stream (page-table rows) comes first.
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.stream):
            return self._forward_now(batch, ids_on_device)

    def _forward_now(self, batch: Batch, ids_on_device: bool) -> "PendingForward":
        ids: list[int] = []
        positions: list[int] = []
        out_loc: list[int] = []
        sample_rows: list[int] = []  # index in the flat tokens of each position we sample from
        decode_ids = ids_on_device and batch.is_decode  # every input token is in last_tokens
        # (mixed batch, ids_on_device) the flat index and page-table row of each decode token
        device_at: list[int] = []
        device_rows: list[int] = []
        for it in batch.items:
            req = it.req
            if not decode_ids:
                if ids_on_device and it.is_decode:
                    device_at.append(len(positions))
                    device_rows.append(req.table_idx)
                    ids.append(0)  # a placeholder: the token is copied from last_tokens below
                    ids.extend(it.draft)
                else:
                    ids.extend(it.input_ids)
            positions.extend(range(it.start, it.end))
            out_loc.extend(self.page_table.slots(req.table_idx, it.start, it.end, self.page_size))
            if it.draft:  # drafts are checked against the logits at every position of the item
                sample_rows.extend(range(len(positions) - it.num_tokens, len(positions)))
            elif it.completes_prompt:
                sample_rows.append(len(positions) - 1)
        row_list = [it.req.table_idx for it in batch.items]
        flags = [it.completes_prompt for it in batch.items]
        graph = self.graph_runner
        # A decode batch replays a captured decode graph; a batch of few tokens (a short prefill, a
        # verify) a token-row graph; the others run eagerly.
        if graph is not None and batch.is_decode and graph.can_run(batch.size) and all(flags):
            # A decode batch through a captured CUDA graph: one copy in, one launch, the input
            # tokens read and the greedy tokens written back inside the graph.
            logits, tokens, rows = graph.run(
                None if decode_ids else ids, positions, out_loc, row_list, [it.end for it in batch.items]
            )
            reqs = [it.req for it in batch.items]
            logprobs = None
            if any(not r.sampling_params.is_greedy or needs_chain(r) or r.sampling_params.logprobs for r in reqs):
                tokens = self.sampler.sample(logits, reqs)
                self.last_tokens.index_copy_(0, rows, tokens)
                logprobs = take_logprobs(logits, tokens, reqs)
            return self._pending(flags, tokens, logprobs)
        rows = self._tensor(row_list)
        sampling = [it.req for it in batch.items if it.completes_prompt]
        if graph is not None and not decode_ids and not device_at and graph.can_run_rows(positions):
            # A short prefill or a verify batch through a captured token-row graph: every token a
            # decode row of its request (cuda_graph.py); logits only of the rows sampled from.
            token_rows = [it.req.table_idx for it in batch.items for _ in range(it.num_tokens)]
            hidden = graph.run_rows(ids, positions, out_loc, token_rows)
        else:
            if decode_ids:
                ids_t = self.last_tokens.index_select(0, rows)
            else:
                ids_t = self._tensor(ids)
                if device_at:  # on the device, without waiting for the batch that sampled them
                    ids_t[self._tensor(device_at)] = self.last_tokens.index_select(0, self._tensor(device_rows))
            meta = AttentionMetadata(
                is_prefill=not batch.is_decode,
                q_lens=[it.num_tokens for it in batch.items],
                kv_lens=[it.end for it in batch.items],
                rows=rows,
                out_loc=self._tensor(out_loc),
                row_ids=row_list,
            )
            self.attn.prepare(meta)
            hidden = self.model(ids_t, self._tensor(positions), self.attn)
        logits = None
        if sample_rows:
            # Only the last position of each request needs logits: the LM head is the largest
            # matmul of a small model, so skipping the other prompt positions matters.
            if len(sample_rows) < hidden.shape[0]:
                hidden = hidden[self._tensor(sample_rows)]
            logits = self.model.compute_logits(hidden)
        if not sampling:
            return PendingForward(flags, None, None)
        if batch.has_drafts:
            return self._verify(batch, logits)
        tokens = self.sampler.sample(logits, sampling)
        logprobs = take_logprobs(logits, tokens, sampling)
        sampled_rows = rows if len(sampling) == batch.size else self._tensor([r for r, f in zip(row_list, flags) if f])
        self.last_tokens.index_copy_(0, sampled_rows, tokens)
        if self.stream is None:
            return PendingForward(flags, tokens, logprobs)
        return self._pending(flags, tokens, logprobs)

    def _verify(self, batch: Batch, logits: torch.Tensor) -> "PendingForward":
        """(speculative decoding) The model's token at every verified position of each item (its
        "targets", `verify.py`); which of them the request keeps is the scheduler's verify step
        (`scheduler/verify_step.py`). The result is ready at once: the tokens are on the host.

        Nothing is written to `last_tokens`: which token is a request's newest is known only after
        the verify step, on the host; the overlap loop writes it there then (`set_last_tokens`)."""
        items = [it for it in batch.items if it.completes_prompt]
        reqs = [it.req for it in items]
        targets = verify(self.sampler.process_fn, logits, reqs, [it.draft for it in items])
        # Logprobs of each target, from the logits of its own position: the tokens a request keeps
        # are its first targets, so their logprobs are the first of these.
        first_row = 0
        rows, row_reqs = [], []
        for it, req, tokens in zip(items, reqs, targets):
            rows.extend(range(first_row, first_row + len(tokens)))
            row_reqs.extend([req] * len(tokens))
            first_row += len(it.draft) + 1
        flat = [t for tokens in targets for t in tokens]
        lp = take_logprobs(logits[self._tensor(rows)], self._tensor(flat), row_reqs)
        per_row = iter(lp.per_row(len(flat)) if lp is not None else [None] * len(flat))
        per_item = iter([(tokens, [next(per_row) for _ in tokens]) for tokens in targets])
        out = ForwardOutput([], [])
        for flag in [it.completes_prompt for it in batch.items]:
            tokens, lps = next(per_item) if flag else ([], [])
            out.tokens.append(tokens)
            out.logprobs.append(lps)
        return PendingForward([], None, ready=out)

    def set_last_tokens(self, rows: list[int], tokens: list[int]) -> None:
        """Page-table row `rows[i]`'s newest token is `tokens[i]` (decided on the host: after a
        verify), for a decode batch that reads its input tokens from `last_tokens`."""
        if rows:
            self.last_tokens.index_copy_(0, self._tensor(rows), self._tensor(tokens))

    def _pending(self, flags: list[bool], tokens: torch.Tensor, logprobs: Optional[BatchLogprobs]) -> "PendingForward":
        """Copy the tokens to page-locked host memory without waiting; result() waits on the event."""
        host = torch.empty(tokens.shape, dtype=tokens.dtype, pin_memory=True)
        host.copy_(tokens, non_blocking=True)
        event = torch.cuda.Event()
        event.record(self.stream)
        return PendingForward(flags, host, logprobs, event)

    def _tensor(self, values: list[int]) -> torch.Tensor:
        """An int64 tensor on the engine's device; on CUDA via pinned memory, without a sync."""
        if self.stream is None:
            return torch.tensor(values, dtype=torch.int64, device=self.device)
        return torch.tensor(values, dtype=torch.int64).pin_memory().to(self.device, non_blocking=True)


@dataclass
class PendingForward:
    """A batch that is running (CUDA) or done (CPU): `result()` gives its next tokens."""

    sampled: list[bool]  # per batch item: does it get a token from this batch?
    tokens: Optional[torch.Tensor]  # on the host (pinned on CUDA), filled when `event` completes
    logprobs: Optional[BatchLogprobs] = None  # of the sampled rows that asked (read after the event)
    event: Optional[torch.cuda.Event] = None  # recorded after the device-to-host copy (CUDA only)
    ready: Optional[ForwardOutput] = None  # a verify batch's result, known when it was launched

    def result(self) -> ForwardOutput:
        if self.ready is not None:
            return self.ready
        if self.event is not None:
            self.event.synchronize()
        values = iter(self.tokens.tolist()) if self.tokens is not None else iter(())
        rows = self.logprobs.per_row(len(self.tokens)) if self.logprobs is not None else None
        lps = iter(rows) if rows is not None else iter(())
        return ForwardOutput(
            [[next(values)] if s else [] for s in self.sampled],
            [[next(lps, None)] if s else [] for s in self.sampled],
        )


def _has_flashinfer() -> bool:
    try:
        import flashinfer  # noqa: F401
    except Exception:
        return False
    return True


@contextlib.contextmanager
def _torch_threads(n: int):
    """Run the block on `n` torch threads, then give the process back the threads it had."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
