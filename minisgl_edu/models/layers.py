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

On CUDA in bf16/fp16, each small step also runs as one FlashInfer kernel instead of several torch
ones (SGLang and vLLM do the same): `rmsnorm`, `fused_add_rmsnorm` (residual add + norm; the
decoder layer then carries the residual from layer to layer, see `DecoderLayer.forward_fused`),
the per-head q/k RMSNorm, RoPE in place on q and k, and `silu_and_mul`. A decode step of a small
model is launch-bound: the torch versions cost ~40 kernels per layer, the fused ones ~8. The CPU
path (and any float32 model) keeps the plain torch code, unchanged. `MINISGL_EDU_FUSED=0` (or
`layers.FUSED_KERNELS = False`) switches the fused kernels off, to compare.

Two steps further on the same path, with Triton kernels of our own (`minisgl_edu.kernels`): q/k
norm, RoPE and the K/V write into the pool become one kernel when the attention backend lets the
caller write the pool (`kv_write_target`, FlashInfer does), and the linear layers of a batch of
at most 16 tokens use a skinny GEMM (`distributed.linear.linear`). At batch 1 a decoder layer
goes one step further (`DecoderLayer._forward_one_token`): its matmuls are one-row kernels that
also compute the RMSNorm or the SwiGLU activation in front of them. `MINISGL_EDU_TRITON=0` turns
all of these off.

Tensor parallelism (`--tp N`): the projections are the column- and row-parallel layers of
`minisgl_edu.distributed.linear`, so each rank holds `num_heads / N` query heads, `num_kv_heads / N`
KV heads and `intermediate_size / N` MLP columns; o_proj and down_proj sum the ranks' partial
outputs. With one rank (the default) they are plain linear layers.
"""

from __future__ import annotations

import functools
import os

import torch
import torch.nn.functional as F
from torch import nn

from minisgl_edu import kernels
from minisgl_edu.attention.base import AttentionBackend
from minisgl_edu.distributed import get_tp_size
from minisgl_edu.distributed.linear import ColumnParallelLinear, RowParallelLinear
from minisgl_edu.models.config import ModelConfig
from minisgl_edu.models.rope import apply_rotary

FUSED_KERNELS = os.environ.get("MINISGL_EDU_FUSED", "1") != "0"


def use_fused(x: torch.Tensor) -> bool:
    """FlashInfer's fused kernels for this tensor? CUDA, half precision (their kernels' types)."""
    return FUSED_KERNELS and x.is_cuda and x.dtype in (torch.bfloat16, torch.float16)


@functools.cache
def _fi():
    """FlashInfer, imported on first use on CUDA (the CPU path never needs it)."""
    import flashinfer.activation
    import flashinfer.norm
    import flashinfer.rope

    return flashinfer


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
        if use_fused(x):
            # One kernel over the last dim of [T, dim] or [T, heads, dim] (any row strides).
            out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            return _fi().norm.rmsnorm(x, self.weight, self.eps, out=out)
        normed = F.rms_norm(x.float(), (x.shape[-1],), eps=self.eps)
        return self.weight * normed.to(x.dtype)

    def add_forward_(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """CUDA only, in place: residual += x, then x = norm(residual). Returns x.

        One kernel (FlashInfer `fused_add_rmsnorm`) for what is otherwise an add, then a norm.
        """
        _fi().norm.fused_add_rmsnorm(x, residual, self.weight, self.eps)
        return x


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
        # RoPE angles of each token, cos and sin [T, head_dim/2] each; on the fused path
        # (positions [T], the float32 cos|sin table [max_pos, head_dim]) instead.
        cos_sin: tuple[torch.Tensor, torch.Tensor],
        attn: AttentionBackend,
    ) -> torch.Tensor:
        return self.attend(self.qkv_proj(hidden), cos_sin, attn)

    def attend(self, qkv: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor],
               attn: AttentionBackend) -> torch.Tensor:
        """Everything after the qkv projection: q/k norm, RoPE, attention, o_proj. [T, q+2kv] -> [T, hidden]"""
        T = qkv.shape[0]
        if use_fused(qkv) and kernels.enabled("rope"):
            out = self._forward_triton(qkv, cos_sin, attn)
            if out is not None:
                return self.o_proj(out.reshape(T, self.q_size))
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(T, self.num_heads, self.head_dim)
        k = k.view(T, self.num_kv_heads, self.head_dim)
        v = v.view(T, self.num_kv_heads, self.head_dim)
        if self.q_norm is not None:
            # Fused path: one kernel per norm over the strided [T, heads, head_dim] view; the
            # result is a new contiguous tensor, so RoPE below rotates it, not the qkv buffer.
            q, k = self.q_norm(q), self.k_norm(k)
        if use_fused(q):
            # In place, one kernel for q and k: angles from the float32 [max_pos, head_dim]
            # cos|sin table at each token's position (NeoX / rotate-half pairing).
            positions, cos_sin_cache = cos_sin
            _fi().rope.apply_rope_with_cos_sin_cache_inplace(
                positions, q, k, self.head_dim, cos_sin_cache, is_neox=True
            )
        else:
            cos, sin = cos_sin
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        # The backend writes k, v into the paged KV pool, then attends over every cached token of
        # each request (the new ones included) with a causal mask.
        out = attn.forward(self.layer_id, q, k, v)  # [T, num_heads, head_dim]
        return self.o_proj(out.reshape(T, self.q_size))

    def _forward_triton(self, qkv: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor],
                        attn: AttentionBackend) -> torch.Tensor | None:
        """CUDA: q/k norm + RoPE + writing k, v into the pool in one Triton kernel, then attention.

        None when the backend does not let us write its pool (the torch backend) or the kernel
        does not take this head size: the caller then runs the separate steps.
        """
        from minisgl_edu.kernels.qk_rope_store import qk_rope_store, supports

        target = attn.kv_write_target(self.layer_id)
        if target is None or not supports(self.head_dim):
            return None
        k_pool, v_pool, out_loc = target
        positions, cos_sin_cache = cos_sin
        norm = self.q_norm is not None
        out = attn.rope_attend(self.layer_id, qkv, positions, cos_sin_cache, self.q_norm.weight if norm else None,
                               self.k_norm.weight if norm else None, self.q_norm.eps if norm else 0.0)
        if out is not None:  # the backend did all of it in one kernel
            return out
        q = qk_rope_store(
            qkv, positions, cos_sin_cache, self.q_norm.weight if norm else None,
            self.k_norm.weight if norm else None, self.q_norm.eps if norm else 0.0, out_loc, k_pool, v_pool,
            self.num_heads, self.num_kv_heads, self.head_dim,
        )
        return attn.forward(self.layer_id, q, None, None)  # k, v: already in the pool


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), with gate and up in one matmul."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.intermediate_size = cfg.intermediate_size // get_tp_size()  # this rank's MLP columns
        self.gate_up_proj = ColumnParallelLinear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=cfg.mlp_bias)
        self.down_proj = RowParallelLinear(cfg.intermediate_size, cfg.hidden_size, bias=cfg.mlp_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate_up = self.gate_up_proj(x)
        if use_fused(gate_up):
            return self.down_proj(_fi().activation.silu_and_mul(gate_up))  # one kernel
        gate, up = gate_up.chunk(2, dim=-1)
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

    def forward_fused(
        self,
        hidden: torch.Tensor,
        residual: torch.Tensor | None,
        cos_sin: tuple[torch.Tensor, torch.Tensor],
        attn: AttentionBackend,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The same block on CUDA, carrying the residual stream separately (as SGLang/vLLM do).

        In: `residual` = the stream before the previous layer's MLP was added (None at layer 0),
        `hidden` = that MLP's output. Out: the same pair for the next layer. Each "add, then
        norm" is one `fused_add_rmsnorm` kernel, which updates both tensors in place; the model
        adds the last MLP output in its final norm.
        """
        if self._one_token_path(hidden):
            return self._forward_one_token(hidden, residual, cos_sin, attn)
        if residual is None:
            residual = hidden
            x = self.input_layernorm(hidden)
        else:
            x = self.input_layernorm.add_forward_(hidden, residual)
        x = self.post_attention_layernorm.add_forward_(self.self_attn(x, cos_sin, attn), residual)
        return self.mlp(x), residual

    def _one_token_path(self, hidden: torch.Tensor) -> bool:
        """Batch-1 decode on one GPU, with norms and activation folded into the matmuls ("fold")?"""
        if hidden.shape[0] != 1 or get_tp_size() != 1 or not (kernels.enabled("gemv") and kernels.enabled("fold")):
            return False
        from minisgl_edu.kernels import gemv

        weights = (self.self_attn.qkv_proj.weight, self.self_attn.o_proj.weight, self.mlp.gate_up_proj.weight,
                   self.mlp.down_proj.weight)
        return all(gemv.supports(hidden, w) for w in weights)

    def _forward_one_token(
        self,
        hidden: torch.Tensor,
        residual: torch.Tensor | None,
        cos_sin: tuple[torch.Tensor, torch.Tensor],
        attn: AttentionBackend,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward_fused` for a single token: the two norms and the activation run inside the
        matmul kernels (kernels/gemv.py), 7 kernels per layer instead of 10. Same in and out."""
        from minisgl_edu.kernels.gemv import gemv

        attn_mod, mlp, norm1, norm2 = self.self_attn, self.mlp, self.input_layernorm, self.post_attention_layernorm
        qkv_w, qkv_b = attn_mod.qkv_proj.weight, attn_mod.qkv_proj.bias
        if residual is None:  # layer 0: the residual stream starts as the embedding itself
            qkv, _ = gemv(hidden, qkv_w, qkv_b, prologue="norm", norm_weight=norm1.weight, eps=norm1.eps)
            residual = hidden
        else:
            qkv, residual = gemv(hidden, qkv_w, qkv_b, prologue="add_norm", residual=residual,
                                 norm_weight=norm1.weight, eps=norm1.eps)
        out = attn_mod.attend(qkv, cos_sin, attn)  # o_proj included (a plain one-row gemv)
        gate_up, residual = gemv(out, mlp.gate_up_proj.weight, mlp.gate_up_proj.bias, prologue="add_norm",
                                 residual=residual, norm_weight=norm2.weight, eps=norm2.eps)
        down, _ = gemv(gate_up, mlp.down_proj.weight, mlp.down_proj.bias, prologue="silu_mul")
        return down, residual
