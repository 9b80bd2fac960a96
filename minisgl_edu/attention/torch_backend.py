"""The torch reference attention backend: paged attention in plain PyTorch.

Where this sits on the request path: it is the attention of every layer on CPU, and the
reference the FlashInfer backend is checked against on GPU. It pads the batch to
[batch, longest query, longest context], gathers each request's K/V from the pool through the
page table, and calls `scaled_dot_product_attention` with a mask that is causal *with an
offset*: query i of a request that already has `prefix` tokens cached sees keys 0..prefix+i.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool


class TorchBackend(AttentionBackend):
    def __init__(self, pool: KVPool, page_table: PageTable, scale: float | None = None) -> None:
        self.pool = pool
        self.page_table = page_table
        self.scale = scale
        self._meta: AttentionMetadata | None = None

    def prepare(self, meta: AttentionMetadata) -> None:
        device = self.pool.k.device
        p = self.pool.page_size
        q_lens = torch.tensor(meta.q_lens, dtype=torch.int64, device=device)
        kv_lens = torch.tensor(meta.kv_lens, dtype=torch.int64, device=device)
        max_q, max_k = max(meta.q_lens), max(meta.kv_lens)

        # Where each request's K/V live: slot of (request b, position j) for j < max_k.
        kpos = torch.arange(max_k, device=device)
        pages = self.page_table.table[meta.rows][:, kpos // p].to(torch.int64)  # [B, max_k]
        slots = pages * p + kpos % p
        k_valid = kpos[None, :] < kv_lens[:, None]
        self.kv_slots = torch.where(k_valid, slots, self.pool.dummy_page * p)

        # Which flattened query token sits at (request b, i); padding points at token 0.
        qi = torch.arange(max_q, device=device)
        q_start = torch.cumsum(q_lens, 0) - q_lens
        q_valid = qi[None, :] < q_lens[:, None]
        self.q_index = torch.where(q_valid, q_start[:, None] + qi[None, :], 0)
        self.q_valid = q_valid

        # Causal with offset: absolute position of query i is (kv_len - q_len + i).
        qpos = (kv_lens - q_lens)[:, None] + qi[None, :]  # [B, max_q]
        mask = (kpos[None, None, :] <= qpos[:, :, None]) & k_valid[:, None, :]
        # A padded query row must still see one key, or softmax returns NaN (it is dropped anyway).
        mask[:, :, 0] |= ~q_valid
        self.mask = mask[:, None, :, :]  # [B, 1, max_q, max_k], broadcast over heads
        self.single = meta.batch_size == 1
        self._meta = meta

    def forward(self, layer_id: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        meta = self._meta
        assert meta is not None, "prepare() must run before forward()"
        self.pool.store(layer_id, meta.out_loc, k, v)
        kc = self.pool.k[layer_id][self.kv_slots]  # [B, max_k, Hkv, D]
        vc = self.pool.v[layer_id][self.kv_slots]
        qb = q[self.q_index]  # [B, max_q, Hq, D]
        out = F.scaled_dot_product_attention(
            qb.transpose(1, 2),
            kc.transpose(1, 2).to(q.dtype),
            vc.transpose(1, 2).to(q.dtype),
            attn_mask=self.mask,
            scale=self.scale,
            enable_gqa=True,
        )  # [B, Hq, max_q, D]
        out = out.transpose(1, 2)
        if self.single:
            return out[0]
        return out[self.q_valid]  # back to [T, Hq, D], request by request
