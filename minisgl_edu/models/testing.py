"""Run a model over a paged KV cache without the scheduler: for tests and notebooks.

Where this sits on the request path: it does, in a few lines, what the scheduler and
`Engine.forward_batch` do for every batch: give each request a page-table row, allocate pages
for its new tokens, compute the pool slot of every new token (`out_loc`), describe the batch in
an `AttentionMetadata`, prepare the attention backend, run the model and project to logits. The
model tests use it to check prefill, decode and batching against `transformers`; other tests can
use it to get a model's logits with one call (`run_prefill`).
"""

from __future__ import annotations

from typing import Any

import torch

from minisgl_edu.attention.base import AttentionMetadata
from minisgl_edu.attention.torch_backend import TorchBackend
from minisgl_edu.kvcache.allocator import PageAllocator
from minisgl_edu.kvcache.page_table import PageTable
from minisgl_edu.kvcache.pool import KVPool
from minisgl_edu.models.config import ModelConfig
from minisgl_edu.models.decoder import CausalLM


class PagedRunner:
    """A model + KV pool + page table + allocator + torch attention backend, and a `step()`."""

    def __init__(
        self,
        model: CausalLM,
        cfg: ModelConfig,
        page_size: int = 16,
        max_tokens: int = 1024,
        max_reqs: int = 8,
        max_len: int = 256,
        kv_dtype: torch.dtype | None = None,
    ) -> None:
        """`kv_dtype`: what the KV pages store (None: the model's dtype; `kvcache.pool.FP8`)."""
        self.model, self.cfg, self.page_size = model, cfg, page_size
        device = next(model.parameters()).device
        dtype = next(model.parameters()).dtype
        num_pages = -(-max_tokens // page_size)
        self.pool = KVPool(
            cfg.num_layers, num_pages, page_size, cfg.num_kv_heads, cfg.head_dim, dtype, device, kv_dtype=kv_dtype
        )
        self.page_table = PageTable(max_reqs, -(-max_len // page_size), device, fill=self.pool.dummy_page)
        self.allocator = PageAllocator(num_pages)
        self.backend = TorchBackend(self.pool, self.page_table)
        self.device = device
        self.lens: dict[int, int] = {}  # page-table row -> tokens cached so far

    def add_request(self) -> int:
        """A new, empty request; returns its page-table row (its id here)."""
        row = self.page_table.alloc_row()
        self.lens[row] = 0
        return row

    def free_request(self, row: int) -> None:
        self.allocator.free(self.page_table.pages[row])
        self.page_table.free_row(row)
        del self.lens[row]

    def step(self, batch: list[tuple[int, list[int]]], all_logits: bool = False) -> list[torch.Tensor]:
        """Run one forward pass over `(row, new_token_ids)` pairs, in batch order.

        Returns, per request, the logits [vocab] of its last new token, or [q_len, vocab] for all
        its new tokens with `all_logits=True`.
        """
        p = self.page_size
        q_lens, kv_lens, out_loc, positions, input_ids = [], [], [], [], []
        for row, tokens in batch:
            start, end = self.lens[row], self.lens[row] + len(tokens)
            # Whole pages are allocated; the last page of a request may be partly empty.
            need = -(-end // p) - len(self.page_table.pages[row])
            self.page_table.append(row, self.allocator.allocate(need))
            pages = self.page_table.pages[row]
            out_loc += [pages[pos // p] * p + pos % p for pos in range(start, end)]
            positions += range(start, end)
            input_ids += tokens
            q_lens.append(len(tokens))
            kv_lens.append(end)
            self.lens[row] = end

        def as_tensor(values: list[int]) -> torch.Tensor:
            return torch.tensor(values, dtype=torch.int64, device=self.device)

        meta = AttentionMetadata(
            is_prefill=any(q > 1 or q == kv for q, kv in zip(q_lens, kv_lens)),
            q_lens=q_lens,
            kv_lens=kv_lens,
            rows=as_tensor([row for row, _ in batch]),
            out_loc=as_tensor(out_loc),
        )
        with torch.inference_mode():
            self.backend.prepare(meta)
            hidden = self.model(as_tensor(input_ids), as_tensor(positions), self.backend)
            ends = torch.cumsum(as_tensor(q_lens), 0)
            if all_logits:
                return list(self.model.compute_logits(hidden).split(q_lens))
            return list(self.model.compute_logits(hidden[ends - 1]))


def run_prefill(
    model: CausalLM, cfg: ModelConfig, prompts: list[list[int]], page_size: int = 16, **kw: Any
) -> list[torch.Tensor]:
    """Prefill all `prompts` in one batch; -> the last-token logits [vocab] of each."""
    runner = PagedRunner(model, cfg, page_size, max_len=max(len(p) for p in prompts) + 1, **kw)
    rows = [runner.add_request() for _ in prompts]
    return runner.step(list(zip(rows, prompts)))


def tiny_hf_config(arch: str = "llama", **overrides: Any) -> Any:
    """A tiny `transformers` config (2 layers, hidden 64, 4 heads, 2 KV heads, vocab 128), fp32.

    Build our side with `ModelConfig.from_hf(tiny_hf_config(...))`; build the reference with
    `AutoModelForCausalLM.from_config(...)`.
    """
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config

    classes = {"llama": LlamaConfig, "qwen2": Qwen2Config, "qwen3": Qwen3Config}
    kwargs: dict[str, Any] = dict(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        eos_token_id=2,
        bos_token_id=1,
    )
    if arch == "qwen3":
        kwargs["head_dim"] = 16
    kwargs.update(overrides)
    config = classes[arch](**kwargs)
    config.architectures = [
        {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}[arch]
    ]
    return config


class IdTokenizer:
    """Enough of a tokenizer for a scheduler on random weights: token ids in, token ids out."""

    eos_token_id = None

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return " ".join(map(str, ids))
