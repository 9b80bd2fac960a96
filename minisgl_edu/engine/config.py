"""Settings of the engine: which model, where, and how much KV cache."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    if dtype == "auto":
        # fp32 on CPU keeps outputs equal to the transformers reference; bf16 on GPU for speed.
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {
        "float32": torch.float32,
        "fp32": torch.float32,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }[dtype]


# Our Triton kernels, by the names `EngineConfig.triton_kernels` takes (all on by default).
TRITON_KERNELS = ("rope", "gemm", "gemv", "fold", "greedy")

# How the CPU engine stores its matmul weights (`EngineConfig.cpu_weights`).
CPU_WEIGHTS = ("float32", "float16", "int4", "auto")


@dataclass
class EngineConfig:
    model: str = "smollm2-135m"  # alias, local HF directory or hub id
    device: str = "auto"  # "cpu", "cuda", or "auto"
    dtype: str = "auto"
    page_size: int = 16
    # What the KV pages store: "auto" the model's dtype; "fp8_e4m3" one byte per number with a
    # float32 scale per token and KV head (`kvcache/pool.py`): about twice the tokens in the same
    # memory, and half the bytes each decode step reads.
    kv_cache_dtype: str = "auto"
    num_pages: Optional[int] = None  # KV pages; None = from max_total_tokens (CPU) or memory (GPU)
    max_total_tokens: int = 16384  # CPU default size of the KV cache, in tokens
    memory_fraction: float = 0.85  # GPU: share of the free memory (after weights) for the KV cache
    # Requests decoded together at most. None: 32 on CPU; on CUDA as many as the KV pool holds at
    # `AUTO_TOKENS_PER_REQUEST` tokens each, between 32 and 256 (`Engine._auto_max_running`).
    max_running_requests: Optional[int] = None
    max_seq_len: Optional[int] = None  # None = the model's context length
    # "torch", "flashinfer", "triton" (decode only), a hybrid "prefill,decode" such as
    # "flashinfer,triton", or "auto": "torch" on CPU; on CUDA with FlashInfer "flashinfer,triton"
    # (our Triton decode attention for decode batches of at most 4 requests, FlashInfer for the rest).
    attention_backend: str = "auto"
    # CUDA, with a backend that has the graph hooks (flashinfer, triton; not torch): decode batches
    # up to this size replay a captured CUDA graph (padded to the next captured size); 0 disables
    # graphs. Ignored on CPU.
    cuda_graph_max_bs: int = 256
    # The CUDA layer variants swapped in for the plain modules when the model is built on CUDA in
    # half precision (`models/cuda_layers.py`); all ignored on CPU and in float32.
    fused_kernels: bool = True  # FlashInfer's fused RMSNorm, residual add + norm, RoPE, SiLU-and-mul
    # Our Triton kernels (`minisgl_edu/kernels/`), by name: "rope" (q/k norm + RoPE + K/V write),
    # "gemm" (matmuls of <= 16 rows), "gemv" (one-row matmuls), "fold" (at batch 1, the norms and
    # the activation inside those), "greedy" (logits, argmax and token write-back of the small
    # decode graphs in one kernel). "gemv" needs "gemm"; "fold" needs "gemv"; "rope" and "fold"
    # also need `fused_kernels`.
    triton_kernels: tuple[str, ...] = TRITON_KERNELS
    # FlashInfer decode: the tensor-core kernel (its plan splits long contexts; faster on mixed
    # context lengths) instead of the CUDA-core one.
    decode_tensor_cores: bool = True
    # CPU in float32: how the matmul weights are stored. "float32" is the exact model (what the
    # tests and chapters compare with transformers); "float16" packs every matmul's weights to
    # float16 for FBGEMM and keeps float32 math (`models/cpu_layers.py`): half the bytes read per
    # decode step, greedy tokens that follow float32's (docs/benchmarks.md). "int4": the layers'
    # matmuls on the 4-bit blocks the bundled GGUF file stores, their inputs and outputs rounded to
    # bfloat16, the logits float16; only on CPUs with AVX512-BF16, faster at one stream, answers
    # further from float32's. "auto" (the server's default, `--cpu-weights`): int4 where the CPU
    # has AVX512-BF16 and the layers are 4-bit blocks, float16 otherwise. Ignored on CUDA and in
    # half precision.
    cpu_weights: str = "float32"
    # CPU: decode batches of at most this many requests run on one torch thread (0: never), the
    # process's other threads idle meanwhile. The server's default is 4 (`--cpu-single-thread-decode`):
    # on 2 cores beside a benchmark client, one stream 14.9 -> 19.7 output tok/s (docs/benchmarks.md).
    cpu_single_thread_decode: int = 0
    seed: int = 0
    # Tensor parallel ranks (`--tp`). With more than one, each rank is its own process, which must
    # have joined the group (`minisgl_edu.distributed.init_tp`) before building the Engine.
    tp_size: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.triton_kernels, str):  # "rope,gemm" from a command line; "" or "0": none
            names = self.triton_kernels.strip()
            self.triton_kernels = () if names in ("", "0") else tuple(n.strip() for n in names.split(","))
        from minisgl_edu.kvcache.pool import KV_CACHE_DTYPES

        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise ValueError(f"kv_cache_dtype must be one of {', '.join(KV_CACHE_DTYPES)}, got {self.kv_cache_dtype!r}")
        if self.cpu_weights not in CPU_WEIGHTS:
            raise ValueError(f"cpu_weights must be one of {', '.join(CPU_WEIGHTS)}, got {self.cpu_weights!r}")
        unknown = set(self.triton_kernels) - set(TRITON_KERNELS)
        if unknown:
            raise ValueError(f"unknown Triton kernels {sorted(unknown)}: choose from {', '.join(TRITON_KERNELS)}")
