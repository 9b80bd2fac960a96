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
    return {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
            "float16": torch.float16, "fp16": torch.float16}[dtype]


@dataclass
class EngineConfig:
    model: str = "smollm2-135m"  # alias, local HF directory or hub id
    device: str = "auto"  # "cpu", "cuda", or "auto"
    dtype: str = "auto"
    page_size: int = 16
    num_pages: Optional[int] = None  # KV pages; None = from max_total_tokens (CPU) or memory (GPU)
    max_total_tokens: int = 16384  # CPU default size of the KV cache, in tokens
    memory_fraction: float = 0.85  # GPU: share of the free memory (after weights) for the KV cache
    max_running_requests: int = 32
    max_seq_len: Optional[int] = None  # None = the model's context length
    attention_backend: str = "auto"  # "torch" | "flashinfer" | "auto"
    # CUDA + FlashInfer only: decode batches up to this size replay a captured CUDA graph
    # (padded to the next captured size); 0 disables graphs. Ignored on CPU.
    cuda_graph_max_bs: int = 256
    seed: int = 0
    # Tensor parallel ranks (`--tp`). With more than one, each rank is its own process, which must
    # have joined the group (`minisgl_edu.distributed.init_tp`) before building the Engine.
    tp_size: int = 1
