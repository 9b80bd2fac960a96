"""The engine: runs one batch through the model and samples the next tokens.

Where this sits on the request path: the scheduler decides *which* tokens to compute (a
`Batch`) and has reserved KV pages for them; `Engine.forward_batch` turns the batch into flat
tensors (token ids, positions, the KV slots to write), plans attention once, runs the model, and
samples one token for every request whose known tokens are now all computed. The engine also owns
the memory: the model weights, the paged KV pool and the page table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from minisgl_edu.attention import AttentionMetadata, create_backend
from minisgl_edu.core import Batch
from minisgl_edu.engine.config import EngineConfig, resolve_device, resolve_dtype
from minisgl_edu.engine.sampler import Sampler
from minisgl_edu.kvcache import KVPool, PageTable, pages_for


@dataclass
class ForwardOutput:
    """Next token of each batch item that sampled one (`None` for a prefill chunk that did not)."""

    next_tokens: list[int | None]


class Engine:
    def __init__(self, config: EngineConfig) -> None:
        from minisgl_edu.models import load_model, resolve_model

        self.config = config
        self.device = resolve_device(config.device)
        self.dtype = resolve_dtype(config.dtype, self.device)
        torch.manual_seed(config.seed)
        t0 = time.perf_counter()
        self.model_path = resolve_model(config.model)
        self.model, self.model_config = load_model(self.model_path, dtype=self.dtype, device=self.device)
        self.load_seconds = time.perf_counter() - t0
        mc = self.model_config

        self.page_size = config.page_size
        num_pages = config.num_pages or self._auto_num_pages()
        self.pool = KVPool(
            mc.num_layers, num_pages, self.page_size, mc.num_kv_heads, mc.head_dim, self.dtype, self.device
        )
        # Never beyond the model's context (its RoPE table ends there), nor beyond the whole cache.
        self.max_seq_len = min(config.max_seq_len or mc.max_position_embeddings, mc.max_position_embeddings,
                               num_pages * self.page_size)
        self.page_table = PageTable(
            config.max_running_requests, pages_for(self.max_seq_len, self.page_size), self.device,
            fill=self.pool.dummy_page,
        )
        backend = config.attention_backend
        if backend == "auto":
            backend = "flashinfer" if self.device.type == "cuda" and _has_flashinfer() else "torch"
        self.attn = create_backend(backend, self.pool, self.page_table)
        self.attention_backend = backend
        self.sampler = Sampler()

    def _auto_num_pages(self) -> int:
        mc = self.model_config
        per_token = KVPool.bytes_per_token(mc.num_layers, mc.num_kv_heads, mc.head_dim, self.dtype)
        if self.device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device)
            tokens = int(free * self.config.memory_fraction) // per_token
        else:
            tokens = self.config.max_total_tokens
        return max(tokens // self.page_size, 1)

    @torch.inference_mode()
    def forward_batch(self, batch: Batch) -> ForwardOutput:
        ids: list[int] = []
        positions: list[int] = []
        out_loc: list[int] = []
        sample_rows: list[int] = []  # index in the flat tokens of each position we sample from
        for it in batch.items:
            req = it.req
            ids.extend(req.all_ids[it.start : it.end])
            positions.extend(range(it.start, it.end))
            out_loc.extend(self.page_table.slots(req.table_idx, it.start, it.end, self.page_size))
            if it.completes_prompt:
                sample_rows.append(len(ids) - 1)
        dev = self.device
        meta = AttentionMetadata(
            is_prefill=batch.is_prefill,
            q_lens=[it.num_tokens for it in batch.items],
            kv_lens=[it.end for it in batch.items],
            rows=torch.tensor([it.req.table_idx for it in batch.items], dtype=torch.int64, device=dev),
            out_loc=torch.tensor(out_loc, dtype=torch.int64, device=dev),
        )
        self.attn.prepare(meta)
        hidden = self.model(
            torch.tensor(ids, dtype=torch.int64, device=dev),
            torch.tensor(positions, dtype=torch.int64, device=dev),
            self.attn,
        )
        next_tokens: list[int | None] = [None] * batch.size
        if sample_rows:
            # Only the last position of each request needs logits: the LM head is the largest
            # matmul of a small model, so skipping the other prompt positions matters.
            logits = self.model.compute_logits(hidden[torch.tensor(sample_rows, device=dev)])
            sampling = [it for it in batch.items if it.completes_prompt]
            tokens = self.sampler.sample(logits, [it.req for it in sampling]).tolist()
            k = 0
            for i, it in enumerate(batch.items):
                if it.completes_prompt:
                    next_tokens[i] = tokens[k]
                    k += 1
        return ForwardOutput(next_tokens)


def _has_flashinfer() -> bool:
    try:
        import flashinfer  # noqa: F401
    except Exception:
        return False
    return True
