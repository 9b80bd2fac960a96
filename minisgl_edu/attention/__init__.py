"""Attention backends by name: `torch` (CPU and GPU reference), `flashinfer` (GPU), `triton`
(GPU, decode batches of a few requests), and hybrids of two, "prefill,decode".

Where this sits on the request path: the engine builds one backend when it starts
(`EngineConfig.attention_backend`); every attention layer of every forward pass calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata
from minisgl_edu.attention.hybrid import HybridBackend


def _torch(pool, page_table, num_qo_heads: int, scale: Optional[float], decode_tensor_cores: bool):
    from minisgl_edu.attention.torch_backend import TorchBackend

    return TorchBackend(pool, page_table, scale)


def _flashinfer(pool, page_table, num_qo_heads: int, scale: Optional[float], decode_tensor_cores: bool):
    # Imported only here: FlashInfer exists only on CUDA machines.
    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend

    return FlashInferBackend(
        pool, page_table, scale, num_qo_heads=num_qo_heads, decode_tensor_cores=decode_tensor_cores
    )


def _triton(pool, page_table, num_qo_heads: int, scale: Optional[float], decode_tensor_cores: bool):
    from minisgl_edu.attention.triton_backend import TritonDecodeBackend

    return TritonDecodeBackend(pool, page_table, num_qo_heads, scale)


BACKENDS: dict[str, Callable[..., AttentionBackend]] = {"torch": _torch, "flashinfer": _flashinfer, "triton": _triton}
DECODE_ONLY = {"triton"}  # backends that can only be the decode half of a hybrid


def create_backend(
    name: str, pool, page_table, num_qo_heads: int, scale: float | None = None, *, decode_tensor_cores: bool = True
) -> AttentionBackend:
    """The backend called `name`, or a `HybridBackend` for "prefill,decode" (e.g. "flashinfer,triton").

    `num_qo_heads` (this rank's query heads): FlashInfer and Triton plan with it; torch reads it
    off q. `decode_tensor_cores`: FlashInfer's decode kernel (`EngineConfig.decode_tensor_cores`).
    """
    parts = [p.strip() for p in name.split(",")]
    unknown = [p for p in parts if p not in BACKENDS]
    if unknown or len(parts) > 2:
        raise ValueError(
            f"unknown attention backend {name!r}: choose from {', '.join(BACKENDS)}, "
            f"or 'prefill,decode' such as 'flashinfer,triton'"
        )
    if parts[0] in DECODE_ONLY:
        raise ValueError(
            f"{parts[0]!r} only decodes: use it as the second half of a hybrid, e.g. 'flashinfer,{parts[0]}'"
        )
    backends = [BACKENDS[p](pool, page_table, num_qo_heads, scale, decode_tensor_cores) for p in dict.fromkeys(parts)]
    return backends[0] if len(backends) == 1 else HybridBackend(*backends)


__all__ = ["AttentionBackend", "AttentionMetadata", "BACKENDS", "HybridBackend", "create_backend"]
