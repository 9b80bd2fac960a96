"""The attention backend interface.

Where this sits on the request path: inside `Engine.forward_batch`, every attention layer of the
model calls `backend.forward(layer_id, q, k, v)`. The backend stores the new K/V into the paged
pool and attends over everything the request has so far. `prepare()` runs once per batch (the
"plan"), `forward()` once per layer, so per-batch index work is not repeated 30 times.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class AttentionMetadata:
    """What attention needs to know about a batch, in token positions.

    For request b: it computes `q_lens[b]` new tokens at positions
    `kv_lens[b] - q_lens[b] .. kv_lens[b] - 1`, and attends to all `kv_lens[b]` tokens, whose K/V
    live in page-table row `rows[b]`. `out_loc` holds the pool slot of every new token, in batch
    order (request 0's tokens first).
    """

    is_prefill: bool
    q_lens: list[int]
    kv_lens: list[int]
    rows: torch.Tensor  # [B] int64, page-table rows
    out_loc: torch.Tensor  # [T] int64, pool slots of the new tokens
    row_ids: Optional[list[int]] = None  # the same rows on the host, when the caller has them

    def host_rows(self) -> list[int]:
        """The page-table rows as a host list (read back from `rows` if not given: a sync)."""
        return self.row_ids if self.row_ids is not None else self.rows.tolist()

    @property
    def batch_size(self) -> int:
        return len(self.q_lens)

    @property
    def num_tokens(self) -> int:
        return int(sum(self.q_lens))


class AttentionBackend(ABC):
    @abstractmethod
    def prepare(self, meta: AttentionMetadata) -> None:
        """Build the per-batch index tensors (once per forward pass)."""

    @abstractmethod
    def forward(self, layer_id: int, q: torch.Tensor, k: Optional[torch.Tensor], v: Optional[torch.Tensor]
                ) -> torch.Tensor:
        """q: [T, Hq, D]; k, v: [T, Hkv, D] for the new tokens. Returns [T, Hq, D].

        k = v = None means the caller has already written them into the pool at this batch's
        slots (see `kv_write_target`).
        """

    def kv_write_target(self, layer_id: int) -> Optional[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(K buffer, V buffer, out_loc) of `layer_id` for a caller that writes the new K/V itself.

        The CUDA path fuses that write into the kernel that rotates k (`kernels/qk_rope_store.py`),
        saving two launches per layer. None (the default): the caller passes k, v to `forward`.
        """
        return None

    def rope_attend(self, layer_id: int, qkv: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor,
                    q_weight: Optional[torch.Tensor], k_weight: Optional[torch.Tensor],
                    eps: float) -> Optional[torch.Tensor]:
        """Everything from the qkv matmul's output to the attention output, if the backend can do
        it in one go: q/k norm, RoPE, the K/V write and attention -> [T, Hq, D].

        The CUDA graphs of a few decode requests do (`kernels/decode_attention.py`): at batch 1 a
        chain of kernels that wait for each other becomes one. None (the default): the caller
        runs the steps itself.
        """
        return None
