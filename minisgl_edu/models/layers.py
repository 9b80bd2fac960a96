"""The building blocks of a decoder layer: RMSNorm, attention, SwiGLU MLP.

Where this sits on the request path: `Engine.forward_batch` calls the model once per batch; every
one of the model's layers runs these modules on *all* tokens of the batch at once. The tokens of
different requests are flattened into one dimension T, so a linear layer is one matrix multiply
for the whole batch: batching many requests costs little more than running one.

Only attention needs to know which token belongs to which request (a token may only look at
earlier tokens of its own request). That knowledge lives in the attention backend, prepared once
per batch by the engine; the `Attention` module here just hands it q, k and v.

Two speed choices that real engines make too:

* q, k and v are computed by one matrix multiply (`qkv_proj`), and the MLP's gate and up
  projections by another (`gate_up_proj`). One big matmul is faster than three small ones. The
  checkpoint stores them separately; `CausalLM.load_weights` stacks them.
* Normalisation and activation run in the model dtype, with float32 only inside RMSNorm,
  matching transformers so the logits agree.

This is the plain PyTorch version, the one that runs on CPU and the reference for everything
else. On CUDA in half precision the engine swaps faster variants in for these modules once, when
it builds the model (`models/cuda_layers.py`: FlashInfer's fused norm, RoPE and activation kernels
and Triton kernels of our own); their forward passes compute the same thing.

Tensor parallelism (`--tp N`): the projections are the column- and row-parallel layers of
`minisgl_edu.distributed.linear`, so each rank holds `num_heads / N` query heads, `num_kv_heads / N`
KV heads and `intermediate_size / N` MLP columns; o_proj and down_proj sum the ranks' partial
outputs. With one rank (the default) they are plain linear layers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from minisgl_edu.attention.base import AttentionBackend
from minisgl_edu.distributed import get_tp_size
from minisgl_edu.distributed.linear import ColumnParallelLinear, RowParallelLinear
from minisgl_edu.models.config import ModelConfig
from minisgl_edu.models.rope import apply_rotary


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight, over the last dimension.

    Computed in float32 and cast back before the weight multiply, exactly as transformers does:
    the mean of squares of bf16 values would lose too much precision.
    """

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            # Nothing to upcast: one op, weight multiply included, the same numbers.
            return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        normed = F.rms_norm(x.float(), (x.shape[-1],), eps=self.eps)
        return self.weight * normed.to(x.dtype)


class Attention(nn.Module):
    """Self-attention with grouped-query heads: num_heads queries share num_kv_heads keys/values."""

    def __init__(self, cfg: ModelConfig, layer_id: int) -> None:
        super().__init__()
        self.layer_id = layer_id  # the backend keeps one K/V buffer per layer in the pool
        # This rank's heads: all of them with one rank; with tensor parallelism 1/tp of the query
        # heads and of the KV heads (whole heads, so attention itself needs no communication).
        tp = get_tp_size()
        self.num_heads = cfg.num_heads // tp
        self.num_kv_heads = cfg.num_kv_heads // tp
        self.head_dim = cfg.head_dim
        self.q_size, self.kv_size = cfg.q_size // tp, cfg.kv_size // tp
        # Column-parallel: each rank computes the q, k, v of its own heads from the full hidden state.
        self.qkv_proj = ColumnParallelLinear(cfg.hidden_size, cfg.q_size + 2 * cfg.kv_size, bias=cfg.attention_bias)
        # Row-parallel: each rank projects its heads' outputs; an all-reduce sums the ranks' parts.
        self.o_proj = RowParallelLinear(cfg.q_size, cfg.hidden_size, bias=cfg.o_proj_bias)
        # Qwen3 normalises every head of q and k (before RoPE) to keep attention logits tame.
        self.q_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps) if cfg.qk_norm else None
        self.k_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps) if cfg.qk_norm else None

    def forward(
        self,
        hidden: torch.Tensor,  # [T, hidden]
        cos_sin: tuple[torch.Tensor, torch.Tensor],  # RoPE tables of each token, [T, head_dim] (rope.py)
        attn: AttentionBackend,
    ) -> torch.Tensor:
        T = hidden.shape[0]
        q, k, v = self.qkv_proj(hidden).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(T, self.num_heads, self.head_dim)
        k = k.view(T, self.num_kv_heads, self.head_dim)
        v = v.view(T, self.num_kv_heads, self.head_dim)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        cos, sin = cos_sin
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        # The backend writes k, v into the paged KV pool, then attends over every cached token of
        # each request (the new ones included) with a causal mask.
        out = attn.forward(self.layer_id, q, k, v)  # [T, num_heads, head_dim]
        return self.o_proj(out.reshape(T, self.q_size))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), with gate and up in one matmul."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.intermediate_size = cfg.intermediate_size // get_tp_size()  # this rank's MLP columns
        self.gate_up_proj = ColumnParallelLinear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=cfg.mlp_bias)
        self.down_proj = RowParallelLinear(cfg.intermediate_size, cfg.hidden_size, bias=cfg.mlp_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class DecoderLayer(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, cfg: ModelConfig, layer_id: int) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer_id)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(
        self, hidden: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor], attn: AttentionBackend
    ) -> torch.Tensor:
        hidden = hidden + self.self_attn(self.input_layernorm(hidden), cos_sin, attn)
        hidden = hidden + self.mlp(self.post_attention_layernorm(hidden))
        return hidden
