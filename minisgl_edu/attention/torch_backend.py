"""The torch reference attention backend: paged attention in plain PyTorch.

Where this sits on the request path: it is the attention of every layer on CPU, and the
reference the FlashInfer backend is checked against on GPU. It pads the batch to
[batch, longest query, longest context], gathers each request's K/V from the pool through the
page table, and calls `scaled_dot_product_attention` with a mask that is causal *with an
offset*: query i of a request that already has `prefix` tokens cached sees keys 0..prefix+i.
A mixed batch (a prompt chunk beside decode tokens) is one such batch: a decode row is a request
with one query, padded like any shorter row.
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

        # Where each request's K/V live: whole pages, in order. Gathering pages (page_size rows
        # at a time) is much cheaper than gathering every token's slot on its own. Key position j
        # of request b is then row j of the gathered [B, num_pages * page_size] block; positions
        # past kv_len (the rest of the last page, dummy pages) are masked out below.
        num_pages = -(-max_k // p)
        max_k = num_pages * p
        kpos = torch.arange(max_k, device=device)
        self.kv_pages = self.page_table.table[meta.rows][:, :num_pages].to(torch.int64)  # [B, pages]
        k_valid = kpos[None, :] < kv_lens[:, None]

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
        self.all_q_valid = min(meta.q_lens) == max_q  # equal query lengths: no padded rows to drop
        self.decode = max_q == 1  # every request adds exactly one token
        self._meta = meta
        self.out_loc = meta.out_loc

    def _gather(self, cache: torch.Tensor) -> torch.Tensor:
        """[B, pages * page_size, Hkv, D]: each request's K (or V) in position order."""
        p, h, d = self.pool.page_size, self.pool.num_kv_heads, self.pool.head_dim
        b, n = self.kv_pages.shape
        paged = cache.view(-1, p, h, d)  # [num_pages + 1, page_size, H, D]
        return paged.index_select(0, self.kv_pages.reshape(-1)).view(b, n * p, h, d)

    def forward(self, layer_id: int, q: torch.Tensor, k: torch.Tensor | None, v: torch.Tensor | None) -> torch.Tensor:
        meta = self._meta
        assert meta is not None, "prepare() must run before forward()"
        if k is not None:  # None: the caller has written them already (the CUDA layers' RoPE kernel)
            self.pool.store(layer_id, meta.out_loc, k, v)
        kc = self._gather(self.pool.k[layer_id])  # [B, max_k, Hkv, D]
        vc = self._gather(self.pool.v[layer_id])
        if self.decode:
            # One query per request: view the Hq query heads as [Hkv, G] (the G heads that share
            # a KV head are adjacent) and give SDPA the G queries as G rows against one KV
            # head. Same numbers as enable_gqa, but each K/V row is read once per KV head instead
            # of once per query head: ~30% faster in float32 on CPU (measured, batch 1-16).
            b, hkv, d = q.shape[0], kc.shape[2], q.shape[2]
            out = F.scaled_dot_product_attention(
                q.view(b, hkv, -1, d),
                kc.transpose(1, 2).to(q.dtype),
                vc.transpose(1, 2).to(q.dtype),
                attn_mask=self.mask,  # [B, 1, 1, max_k]: broadcast over KV heads and the G rows
                scale=self.scale,
            )  # [B, Hkv, G, D]
            return out.reshape(b, -1, d)
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
        if self.all_q_valid:
            return out.reshape(-1, *out.shape[2:])
        return out[self.q_valid]  # back to [T, Hq, D], request by request
