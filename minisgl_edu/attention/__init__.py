"""Attention backends: `torch` (CPU and GPU reference) and `flashinfer` (GPU)."""

from __future__ import annotations

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata


def create_backend(
    name: str, pool, page_table, num_qo_heads: int, scale: float | None = None
) -> AttentionBackend:
    """`num_qo_heads` (this rank's query heads): FlashInfer plans with it; torch reads it off q."""
    if name == "torch":
        from minisgl_edu.attention.torch_backend import TorchBackend

        return TorchBackend(pool, page_table, scale)
    if name == "flashinfer":
        # Imported only here: FlashInfer exists only on CUDA machines.
        from minisgl_edu.attention.flashinfer_backend import FlashInferBackend

        return FlashInferBackend(pool, page_table, scale, num_qo_heads=num_qo_heads)
    raise ValueError(f"unknown attention backend {name!r} (choose 'torch' or 'flashinfer')")


__all__ = ["AttentionBackend", "AttentionMetadata", "create_backend"]
