"""The torch reference attention backend: paged attention in plain PyTorch.

Where this sits on the request path: it is the attention of every layer on CPU, and the
reference the FlashInfer backend is checked against on GPU. It pads a batch to
[batch, longest query, longest context], gathers each request's K/V from the pool through the
page table, and calls `scaled_dot_product_attention` with a mask that is causal *with an
offset*: query i of a request that already has `prefix` tokens cached sees keys 0..prefix+i.

A mixed batch (`SchedulerConfig.mixed_chunk`: prompt chunks first, then one decode token per
running request) is planned as two such padded batches, one after the other in the flat tokens:
the rows before the trailing run of one-query rows (the prompt chunks), and that run (the decode
tokens), which takes the decode path. Padded as one batch, every decode row would do as much
attention work as the longest chunk. The two outputs are concatenated in token order.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from minisgl_edu.attention.base import AttentionBackend, AttentionMetadata
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool


@dataclass
class _Plan:
    """One padded attention call over consecutive requests of the batch."""

    tokens: slice  # the plan's tokens in the batch's flat q (requests are contiguous in it)
    kv_pages: torch.Tensor  # [B, pages]: each request's pages, in position order
    q_index: torch.Tensor  # [B, max_q]: which of the plan's tokens sits at (request b, query i)
    q_valid: torch.Tensor  # [B, max_q]: False where a shorter request is padded
    mask: torch.Tensor  # [B, 1, max_q, max_k]: which keys each query sees
    decode: bool  # every request adds exactly one token: the grouped decode path
    single: bool  # one request: no padding to drop
    all_q_valid: bool  # equal query lengths: no padded rows to drop


def _decode_tail(q_lens: list[int]) -> int:
    """Where the trailing run of one-query rows starts (len(q_lens): there is none)."""
    start = len(q_lens)
    while start > 0 and q_lens[start - 1] == 1:
        start -= 1
    return start


class TorchBackend(AttentionBackend):
    def __init__(self, pool: KVPool, page_table: PageTable, scale: float | None = None) -> None:
        self.pool = pool
        self.page_table = page_table
        self.scale = scale
        self._meta: AttentionMetadata | None = None
        self._plans: list[_Plan] = []

    def prepare(self, meta: AttentionMetadata) -> None:
        # A mixed batch's rows are [chunk..., 1, 1, ...]: the decode rows come last (`Batch`).
        # Any other order (or a batch of one kind) is one plan, which is correct for any rows.
        split = _decode_tail(meta.q_lens)
        if 0 < split < meta.batch_size:
            chunks = self._make_plan(meta.q_lens[:split], meta.kv_lens[:split], meta.rows[:split], first_token=0)
            decodes = self._make_plan(
                meta.q_lens[split:], meta.kv_lens[split:], meta.rows[split:], first_token=chunks.tokens.stop
            )
            self._plans = [chunks, decodes]
        else:
            self._plans = [self._make_plan(meta.q_lens, meta.kv_lens, meta.rows, first_token=0)]
        self._meta = meta
        self.out_loc = meta.out_loc

    def _make_plan(self, q_lens: list[int], kv_lens: list[int], rows: torch.Tensor, first_token: int) -> _Plan:
        """The index tensors of one padded call over these requests, whose tokens start at
        `first_token` in the batch's flat q."""
        device = self.pool.k.device
        p = self.pool.page_size
        q_len_t = torch.tensor(q_lens, dtype=torch.int64, device=device)
        kv_len_t = torch.tensor(kv_lens, dtype=torch.int64, device=device)
        max_q, max_k = max(q_lens), max(kv_lens)

        # Where each request's K/V live: whole pages, in order. Gathering pages (page_size rows
        # at a time) is much cheaper than gathering every token's slot on its own. Key position j
        # of request b is then row j of the gathered [B, num_pages * page_size] block; positions
        # past kv_len (the rest of the last page, dummy pages) are masked out below.
        num_pages = -(-max_k // p)
        max_k = num_pages * p
        kpos = torch.arange(max_k, device=device)
        kv_pages = self.page_table.table[rows][:, :num_pages].to(torch.int64)  # [B, pages]
        k_valid = kpos[None, :] < kv_len_t[:, None]

        # Which of the plan's tokens sits at (request b, i); padding points at token 0.
        qi = torch.arange(max_q, device=device)
        q_start = torch.cumsum(q_len_t, 0) - q_len_t
        q_valid = qi[None, :] < q_len_t[:, None]
        q_index = torch.where(q_valid, q_start[:, None] + qi[None, :], 0)

        # Causal with offset: absolute position of query i is (kv_len - q_len + i).
        qpos = (kv_len_t - q_len_t)[:, None] + qi[None, :]  # [B, max_q]
        mask = (kpos[None, None, :] <= qpos[:, :, None]) & k_valid[:, None, :]
        # A padded query row must still see one key, or softmax returns NaN (it is dropped anyway).
        mask[:, :, 0] |= ~q_valid
        return _Plan(
            tokens=slice(first_token, first_token + sum(q_lens)),
            kv_pages=kv_pages,
            q_index=q_index,
            q_valid=q_valid,
            mask=mask[:, None, :, :],  # broadcast over heads
            decode=max_q == 1,
            single=len(q_lens) == 1,
            all_q_valid=min(q_lens) == max_q,
        )

    def forward(self, layer_id: int, q: torch.Tensor, k: torch.Tensor | None, v: torch.Tensor | None) -> torch.Tensor:
        meta = self._meta
        assert meta is not None, "prepare() must run before forward()"
        if k is not None:  # None: the caller has written them already (the CUDA layers' RoPE kernel)
            self.pool.store(layer_id, meta.out_loc, k, v)
        # Every plan reads only its own requests' K/V, all stored above.
        outs = [self._attend(layer_id, plan, q[plan.tokens]) for plan in self._plans]
        return outs[0] if len(outs) == 1 else torch.cat(outs)

    def _attend(self, layer_id: int, plan: _Plan, q: torch.Tensor) -> torch.Tensor:
        """Attention of one plan's tokens q [T, Hq, D] -> [T, Hq, D]."""
        # [B, max_k, Hkv, D] each: the requests' pages in position order (an FP8 pool dequantizes here)
        kc, vc = self.pool.load_pages(layer_id, plan.kv_pages)
        if plan.decode:
            # One query per request: view the Hq query heads as [Hkv, G] (the G heads that share
            # a KV head are adjacent) and give SDPA the G queries as G rows against one KV
            # head. Same numbers as enable_gqa, but each K/V row is read once per KV head instead
            # of once per query head: ~30% faster in float32 on CPU (measured, batch 1-16).
            b, hkv, d = q.shape[0], kc.shape[2], q.shape[2]
            out = F.scaled_dot_product_attention(
                q.view(b, hkv, -1, d),
                kc.transpose(1, 2).to(q.dtype),
                vc.transpose(1, 2).to(q.dtype),
                attn_mask=plan.mask,  # [B, 1, 1, max_k]: broadcast over KV heads and the G rows
                scale=self.scale,
            )  # [B, Hkv, G, D]
            return out.reshape(b, -1, d)
        qb = q[plan.q_index]  # [B, max_q, Hq, D]
        out = F.scaled_dot_product_attention(
            qb.transpose(1, 2),
            kc.transpose(1, 2).to(q.dtype),
            vc.transpose(1, 2).to(q.dtype),
            attn_mask=plan.mask,
            scale=self.scale,
            enable_gqa=True,
        )  # [B, Hq, max_q, D]
        out = out.transpose(1, 2)
        if plan.single:
            return out[0]
        if plan.all_q_valid:
            return out.reshape(-1, *out.shape[2:])
        return out[plan.q_valid]  # back to [T, Hq, D], request by request
