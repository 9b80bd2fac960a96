"""The engine: runs one batch through the model and samples the next tokens.

Where this sits on the request path: the scheduler decides *which* tokens to compute (a
`Batch`) and has reserved KV pages for them; `Engine.forward_batch` computes them in three steps
(`_forward_now`):

1. inputs   the batch laid out flat: token ids, positions, the KV slots to write, the positions
            to take logits from (`ForwardInputs`, forward_inputs.py)
2. run      the model on them, by the runner chosen when the engine was built: eager
            (runner.py), or on CUDA a captured graph where one fits the batch (cuda_graph.py)
3. output   one token for every request whose known tokens are now all computed (the sampler,
            sampler.py), or for a request with drafts the model's token at each (verify.py)

The engine also owns the memory: the model weights, the paged KV pool and the page table.

With tensor parallelism (`config.tp_size` > 1) every rank runs its own Engine on the same batches:
its model holds 1/tp of the weights and its KV pool 1/tp of the KV heads (see
`minisgl_edu.distributed`); the logits, and so the sampled tokens, are the same on every rank.
"""

from __future__ import annotations

import contextlib
import time
from typing import Optional

import torch

from minisgl_edu.attention import create_backend
from minisgl_edu.core import Batch
from minisgl_edu.engine.config import EngineConfig, resolve_device, resolve_dtype
from minisgl_edu.engine.forward_inputs import ForwardInputs
from minisgl_edu.engine.logits_chain import needs_chain
from minisgl_edu.engine.logprobs import BatchLogprobs, take_logprobs
from minisgl_edu.engine.output import ForwardOutput, PendingForward
from minisgl_edu.engine.runner import EagerRunner, RunOutput
from minisgl_edu.engine.sampler import Sampler
from minisgl_edu.engine.verify import verify_batch
from minisgl_edu.kvcache import KVPool, PageTable, pages_for
from minisgl_edu.kvcache.pool import KV_CACHE_DTYPES

CPU_MAX_RUNNING = 32  # the CPU's default running-request limit: 2 cores gain nothing from more
# CUDA: the default limit is the number of requests the KV pool holds at this many tokens each
# (prompt and output), between CPU_MAX_RUNNING and GPU_MAX_RUNNING. An H200 holds ~1M tokens of
# Qwen3-0.6B, so 256; a small GPU's pool gives fewer, and admission never reserves past the pool.
AUTO_TOKENS_PER_REQUEST = 2048
GPU_MAX_RUNNING = 256  # also the default largest CUDA graph (`cuda_graph_max_bs`)


class Engine:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._load_model()
        self._build_memory()
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
        self.weights = self._swap_in_fast_layers()  # what the server's ready line says the weights are
        self.sampler = Sampler()
        # The token each page-table row sampled last, kept where the model runs: the overlap loop
        # feeds it to the row's next decode step before the host has even seen it.
        # One spare entry at the end, for the padding rows of CUDA graphs (cuda_graph.py).
        self.last_tokens = torch.zeros(self.page_table.max_reqs + 1, dtype=torch.int64, device=self.device)
        # CUDA only: a stream of our own for the forward passes (so the scheduler's small
        # synchronous copies on the default stream never wait for a running batch). The CPU path
        # makes no CUDA call at all.
        self.stream = torch.cuda.Stream(self.device) if self.device.type == "cuda" else None
        # The runner, chosen here once: eager, or on CUDA the graph runner, which replays a
        # captured graph where one fits a batch and runs the others eagerly.
        self.runner = self.eager_runner = EagerRunner(self.model, self.attn, self.last_tokens)
        self.graph_runner = None
        if self.stream is not None and self.attn.supports_graphs and config.cuda_graph_max_bs > 0:
            from minisgl_edu.engine.cuda_graph import CudaGraphRunner
            from minisgl_edu.kernels import triton_available

            self.runner = self.graph_runner = CudaGraphRunner(
                self,
                self.eager_runner,
                min(config.cuda_graph_max_bs, self.page_table.max_reqs),
                greedy_kernel="greedy" in config.triton_kernels and triton_available(),
            )

    def _load_model(self) -> None:
        """The device, the dtype and the model's weights (this rank's share of them)."""
        from minisgl_edu.distributed import check_tp_size, get_tp_rank, get_tp_size
        from minisgl_edu.models import ModelConfig, load_model, resolve_model

        config = self.config
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
        # This rank's attention heads (all of them with one rank): its KV pool stores only these.
        self.num_kv_heads = self.model_config.num_kv_heads // self.tp_size
        self.num_qo_heads = self.model_config.num_heads // self.tp_size

    def _build_memory(self) -> None:
        """The paged KV pool and the page table (a row of pages per running request)."""
        config, mc = self.config, self.model_config
        self.page_size = config.page_size
        self.kv_dtype = KV_CACHE_DTYPES[config.kv_cache_dtype] or self.dtype
        num_pages = config.num_pages or self._auto_num_pages()
        self.pool = KVPool(
            mc.num_layers,
            num_pages,
            self.page_size,
            self.num_kv_heads,
            mc.head_dim,
            self.dtype,
            self.device,
            kv_dtype=self.kv_dtype,
        )
        # Never beyond the model's context (its RoPE table ends there), nor beyond the whole cache.
        self.max_seq_len = min(
            config.max_seq_len or mc.max_position_embeddings, mc.max_position_embeddings, num_pages * self.page_size
        )
        self.page_table = PageTable(
            config.max_running_requests or self._auto_max_running(num_pages),
            pages_for(self.max_seq_len, self.page_size),
            self.device,
            fill=self.pool.dummy_page,
        )

    def _swap_in_fast_layers(self) -> str:
        """The model's modules were built plain; on CUDA in half precision the faster variants
        (models/cuda_layers.py), on CPU with `cpu_weights` other than "float32" the packed matmuls
        (models/cpu_layers.py), are swapped in now, once, as the settings say. -> what the weights
        are, in words."""
        config = self.config
        if self.device.type == "cuda" and self.dtype in (torch.bfloat16, torch.float16):
            from minisgl_edu.models.cuda_layers import use_cuda_layers

            use_cuda_layers(self.model, fused=config.fused_kernels, triton=config.triton_kernels)
        if not (self.device.type == "cpu" and self.dtype == torch.float32 and config.cpu_weights != "float32"):
            return str(self.dtype).removeprefix("torch.")
        from minisgl_edu.models.cpu_layers import int4_is_fast, use_cpu_layers

        if config.cpu_weights == "int4" and not int4_is_fast():
            raise ValueError(
                "cpu_weights='int4' runs torch's int4 CPU matmul, which is fast only with AVX512-BF16, "
                "and this CPU has none: use cpu_weights='float16'"
            )
        # float16 or int4 weights ("auto" decided here), float32 math between the matmuls
        return {
            "float16": "float16 weights, float32 math",
            "int4": "int4 layer weights with bfloat16 matmul inputs, float16 logits, float32 math",
        }[use_cpu_layers(self.model, config.cpu_weights)]

    def _auto_backend(self) -> str:
        """torch on CPU; on CUDA with FlashInfer, FlashInfer plus our Triton decode kernel for small
        decode batches (over an FP8 pool, for all of them) when Triton is there and the kernel takes
        this model's heads."""
        if self.device.type != "cuda" or not _has_flashinfer():
            return "torch"
        from minisgl_edu.kernels import triton_available

        if triton_available():
            from minisgl_edu.kernels import decode_attention, decode_attention_fp8

            # An FP8 pool: our FP8 kernel decodes every batch size; bfloat16: ours for small batches.
            kernel = decode_attention_fp8 if self.pool.quantized else decode_attention
            if kernel.supports(self.num_qo_heads, self.num_kv_heads, self.model_config.head_dim):
                return "flashinfer,triton"
        return "flashinfer"

    def _auto_max_running(self, num_pages: int) -> int:
        if self.device.type != "cuda":
            return CPU_MAX_RUNNING
        fits = num_pages * self.page_size // AUTO_TOKENS_PER_REQUEST
        return max(CPU_MAX_RUNNING, min(GPU_MAX_RUNNING, fits))

    def _auto_num_pages(self) -> int:
        mc = self.model_config
        # FP8 pages: about half the bytes per token, so the same memory holds about twice the tokens.
        per_token = KVPool.bytes_per_token(mc.num_layers, self.num_kv_heads, mc.head_dim, self.kv_dtype)
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
    def launch_batch(self, batch: Batch) -> PendingForward:
        """Start `batch`; return a handle whose `result()` waits for the sampled tokens.

        On CPU everything is done before this returns. On CUDA the work is only *queued* on the
        engine's stream, and no step here waits for the GPU, so the scheduler can prepare the next
        batch meanwhile (overlap scheduling): the input token of a decode item is read on the
        device from `last_tokens` (the token this request's previous batch sampled), which the
        host may not have seen yet (`forward_inputs.py`).
        """
        if self.stream is None:
            n = self.config.cpu_single_thread_decode
            if batch.is_decode and len(batch.items) <= n and torch.get_num_threads() > 1:
                # A decode step of a few requests is a chain of small ops. Split between threads,
                # each op also waits for the other threads to wake; on a machine whose cores the
                # server's other processes and a client share, that wait is longer than the work.
                with _torch_threads(1):
                    return self._forward_now(batch)
            return self._forward_now(batch)
        # Work the scheduler queued on the default stream (page-table rows) comes first.
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.stream):
            return self._forward_now(batch)

    def _forward_now(self, batch: Batch) -> PendingForward:
        """The forward pass in three steps: inputs, run the model, sample."""
        # 1. Inputs: the batch laid out flat, token by token (forward_inputs.py).
        inputs = ForwardInputs.of(batch, self.page_table, self.page_size)
        # 2. Run the model: the runner chosen when the engine was built (eager, or CUDA graphs
        #    where one fits); the logits of the positions sampled from.
        out = self.runner.run(inputs)
        if out.logits is None:  # only prompt chunks that leave part of their prompt for later
            return PendingForward(inputs.sampled, None)
        # 3. Output: the next token of each item that completed its known tokens, or, for items
        #    with drafts, the model's token at every position (verify.py).
        if batch.has_drafts:
            return PendingForward([], None, ready=verify_batch(self.sampler.process_fn, batch, out.logits))
        return self._sample(inputs, out, [it.req for it in batch.items if it.completes_prompt])

    def _sample(self, inputs: ForwardInputs, out: RunOutput, reqs: list) -> PendingForward:
        """The sampled tokens (and logprobs, for the requests that asked), also kept in
        `last_tokens`, where the next decode step reads them."""
        if out.greedy is not None and not any(needs_sampler(r) for r in reqs):
            tokens = out.greedy  # a decode graph picked them, and wrote them to last_tokens
        else:
            tokens = self.sampler.sample(out.logits, reqs)
            self.last_tokens.index_copy_(0, self._tensor(inputs.sampled_rows), tokens)
        return self._pending(inputs.sampled, tokens, take_logprobs(out.logits, tokens, reqs))

    def set_last_tokens(self, rows: list[int], tokens: list[int]) -> None:
        """Page-table row `rows[i]`'s newest token is `tokens[i]` (decided on the host: after a
        verify), for the decode batch that reads it from `last_tokens`."""
        if rows:
            self.last_tokens.index_copy_(0, self._tensor(rows), self._tensor(tokens))

    def _pending(self, flags: list[bool], tokens: torch.Tensor, logprobs: Optional[BatchLogprobs]) -> PendingForward:
        """The tokens of a batch: as they are on CPU; on CUDA copied to page-locked host memory
        without waiting (`result()` waits on the event)."""
        if self.stream is None:
            return PendingForward(flags, tokens, logprobs)
        host = torch.empty(tokens.shape, dtype=tokens.dtype, pin_memory=True)
        host.copy_(tokens, non_blocking=True)
        event = torch.cuda.Event()
        event.record(self.stream)
        return PendingForward(flags, host, logprobs, event)

    def _tensor(self, values: list[int]) -> torch.Tensor:
        return self.eager_runner.tensor(values)


def needs_sampler(req) -> bool:
    """Does the request's next token need more than the argmax of the model's logits?"""
    return not req.sampling_params.is_greedy or needs_chain(req)


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
