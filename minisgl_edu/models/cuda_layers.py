"""CUDA variants of the model's modules, swapped in once when the engine builds the model.

Where this sits on the request path: the same place as `layers.py` and `decoder.py` (every forward
pass of `Engine.forward_batch`), on CUDA in half precision only. The plain modules are the
reference: this file computes the same thing with fewer, faster kernels. A decode step of a small
model is launch-bound (the plain layer is ~40 kernels, most of them tiny), so each variant here
removes kernels:

| plain module | CUDA variant | kernels |
|---|---|---|
| `RMSNorm` | `FusedRMSNorm` | FlashInfer `rmsnorm`; `add_forward_`: residual add + norm in one (`fused_add_rmsnorm`) |
| `MLP` | `FusedMLP` | FlashInfer `silu_and_mul` |
| `Attention` | `FusedAttention` | FlashInfer RoPE on q and k in place, from the float32 cos/sin table |
| `Attention` | `TritonRopeAttention` | q/k norm + RoPE + K/V write in one Triton kernel (`kernels/qk_rope_store.py`) |
| `ColumnParallelLinear`, `RowParallelLinear` | `CudaColumnParallelLinear`, `CudaRowParallelLinear` | <= 16 rows: `kernels/skinny_gemm.py`; one row: `kernels/gemv.py` |
| `DecoderLayer` | `CudaDecoderLayer` | carries the residual stream beside the hidden state (as SGLang and vLLM do); at batch 1 ("fold") the norms and the activation run inside the one-row matmuls |
| `DecoderModel` | `CudaDecoderModel` | passes positions and the cos/sin table to the layers; the final norm adds the last residual |

`use_cuda_layers(model, ...)` does the swap: it changes the class of each module in place
(`module.__class__ = ...`), so parameters, their names and the loaded weights stay where they are;
only `forward` changes. Which variants are swapped in is decided there, once, from the engine's
settings (`EngineConfig.fused_kernels`, `EngineConfig.triton_kernels`) and the attention backend;
nothing in a forward pass asks which device it runs on. `use_plain_layers` swaps back.

The one choice left for each call is by shape: a matmul of 1 or <= 16 rows takes another kernel
than a prefill's, and the batch-1 layer another path than a larger batch's.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import torch
import torch.nn.functional as F

from minisgl_edu.attention.base import AttentionBackend
from minisgl_edu.distributed import get_tp_size
from minisgl_edu.distributed.linear import ColumnParallelLinear, RowParallelLinear
from minisgl_edu.distributed.parallel_state import all_reduce
from minisgl_edu.models.decoder import CausalLM, DecoderModel
from minisgl_edu.models.layers import MLP, Attention, DecoderLayer, RMSNorm


@functools.cache
def _fi():
    """FlashInfer, imported when the first fused module runs (only ever on CUDA)."""
    import flashinfer.activation
    import flashinfer.norm
    import flashinfer.rope

    return flashinfer


class FusedRMSNorm(RMSNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # One kernel over the last dim of [T, dim] or [T, heads, dim] (any row strides).
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        return _fi().norm.rmsnorm(x, self.weight, self.eps, out=out)

    def add_forward_(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """In place: residual += x, then x = norm(residual). Returns x. One kernel for an add and a norm."""
        _fi().norm.fused_add_rmsnorm(x, residual, self.weight, self.eps)
        return x


class FusedMLP(MLP):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(_fi().activation.silu_and_mul(self.gate_up_proj(x)))


class FusedAttention(Attention):
    """Attention whose RoPE reads the float32 [max_pos, head_dim] cos|sin table at each position
    inside one kernel, for q and k together (NeoX / rotate-half pairing)."""

    def forward(
        self, hidden: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, attn: AttentionBackend
    ) -> torch.Tensor:
        return self.attend(self.qkv_proj(hidden), positions, cos_sin_cache, attn)

    def attend(
        self, qkv: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, attn: AttentionBackend
    ) -> torch.Tensor:
        """Everything after the qkv projection: q/k norm, RoPE, attention, o_proj. [T, q+2kv] -> [T, hidden]"""
        T = qkv.shape[0]
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(T, self.num_heads, self.head_dim)
        k = k.view(T, self.num_kv_heads, self.head_dim)
        v = v.view(T, self.num_kv_heads, self.head_dim)
        if self.q_norm is not None:
            # One kernel per norm over the strided [T, heads, head_dim] view; the result is a new
            # contiguous tensor, so RoPE below rotates it, not the qkv buffer.
            q, k = self.q_norm(q), self.k_norm(k)
        _fi().rope.apply_rope_with_cos_sin_cache_inplace(positions, q, k, self.head_dim, cos_sin_cache, is_neox=True)
        out = attn.forward(self.layer_id, q, k, v)  # [T, num_heads, head_dim]
        return self.o_proj(out.reshape(T, self.q_size))


class TritonRopeAttention(FusedAttention):
    """q/k norm, RoPE and the K/V write into the pool in one Triton kernel, then attention.

    The kernel writes k and v at the batch's slots (`attn.out_loc`) itself, so the backend is
    handed k = v = None.
    """

    def attend(
        self, qkv: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, attn: AttentionBackend
    ) -> torch.Tensor:
        from minisgl_edu.kernels.qk_rope_store import qk_rope_store

        T = qkv.shape[0]
        pool, norm = attn.pool, self.q_norm is not None
        q = qk_rope_store(
            qkv,
            positions,
            cos_sin_cache,
            self.q_norm.weight if norm else None,
            self.k_norm.weight if norm else None,
            self.q_norm.eps if norm else 0.0,
            attn.out_loc,
            pool.k[self.layer_id],
            pool.v[self.layer_id],
            self.num_heads,
            self.num_kv_heads,
            self.head_dim,
            k_scale=pool.k_scale[self.layer_id] if pool.quantized else None,  # FP8 pages: quantized on the way in
            v_scale=pool.v_scale[self.layer_id] if pool.quantized else None,
        )
        out = attn.forward(self.layer_id, q, None, None)  # k, v: already in the pool
        return self.o_proj(out.reshape(T, self.q_size))


def cuda_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, one_row: bool) -> torch.Tensor:
    """F.linear, except for a small decode batch: one row -> `gemv` (when `one_row`), <= 16 rows ->
    the skinny GEMM. At those shapes a linear layer only reads its weight, and these read it at
    least as fast as cuBLAS (much faster for some shapes)."""
    from minisgl_edu.kernels import gemv, skinny_gemm

    if one_row and x.shape[0] == 1 and gemv.supports(x, weight):
        return gemv.gemv(x, weight, bias)[0]
    if skinny_gemm.supports(x, weight):  # <= MAX_ROWS rows, half precision, a K tile that fits
        return skinny_gemm.skinny_linear(x, weight, bias)
    return F.linear(x, weight, bias)


class CudaColumnParallelLinear(ColumnParallelLinear):
    one_row = False  # set by use_cuda_layers: one-row inputs go to kernels/gemv.py

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cuda_linear(x, self.weight, self.bias, self.one_row)


class CudaRowParallelLinear(RowParallelLinear):
    one_row = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.tp_size == 1:
            return cuda_linear(x, self.weight, self.bias, self.one_row)
        y = all_reduce(cuda_linear(x, self.weight, None, self.one_row))
        return y if self.bias is None else y + self.bias


class CudaDecoderLayer(DecoderLayer):
    """The pre-norm block with the residual stream carried separately.

    In: `residual` = the stream before the previous layer's MLP was added (None at layer 0),
    `hidden` = that MLP's output. Out: the same pair for the next layer. Each "add, then norm" is
    one `fused_add_rmsnorm` kernel, which updates both tensors in place; the model adds the last
    MLP output in its final norm.
    """

    fold = False  # set by use_cuda_layers: a batch of one token takes `_forward_one_token`

    def forward(
        self,
        hidden: torch.Tensor,
        residual: torch.Tensor | None,
        positions: torch.Tensor,
        cos_sin_cache: torch.Tensor,
        attn: AttentionBackend,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.fold and hidden.shape[0] == 1:
            return self._forward_one_token(hidden, residual, positions, cos_sin_cache, attn)
        if residual is None:
            residual = hidden
            x = self.input_layernorm(hidden)
        else:
            x = self.input_layernorm.add_forward_(hidden, residual)
        x = self.post_attention_layernorm.add_forward_(self.self_attn(x, positions, cos_sin_cache, attn), residual)
        return self.mlp(x), residual

    def _forward_one_token(
        self,
        hidden: torch.Tensor,
        residual: torch.Tensor | None,
        positions: torch.Tensor,
        cos_sin_cache: torch.Tensor,
        attn: AttentionBackend,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` for a single token: the two norms and the activation run inside the matmul
        kernels (kernels/gemv.py), 7 kernels per layer instead of 10. Same in and out."""
        from minisgl_edu.kernels.gemv import gemv

        attn_mod, mlp, norm1, norm2 = self.self_attn, self.mlp, self.input_layernorm, self.post_attention_layernorm
        qkv_w, qkv_b = attn_mod.qkv_proj.weight, attn_mod.qkv_proj.bias
        if residual is None:  # layer 0: the residual stream starts as the embedding itself
            qkv, _ = gemv(hidden, qkv_w, qkv_b, prologue="norm", norm_weight=norm1.weight, eps=norm1.eps)
            residual = hidden
        else:
            qkv, residual = gemv(
                hidden, qkv_w, qkv_b, prologue="add_norm", residual=residual, norm_weight=norm1.weight, eps=norm1.eps
            )
        out = attn_mod.attend(qkv, positions, cos_sin_cache, attn)  # o_proj included
        gate_up, residual = gemv(
            out,
            mlp.gate_up_proj.weight,
            mlp.gate_up_proj.bias,
            prologue="add_norm",
            residual=residual,
            norm_weight=norm2.weight,
            eps=norm2.eps,
        )
        down, _ = gemv(gate_up, mlp.down_proj.weight, mlp.down_proj.bias, prologue="silu_mul")
        return down, residual


class CudaDecoderModel(DecoderModel):
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionBackend) -> torch.Tensor:
        hidden = self.embed_tokens(input_ids)
        # The RoPE kernels read the float32 table at `positions` themselves: no per-batch lookup.
        cos_sin_cache = self.rotary_emb.cos_sin_table()
        residual = None
        for layer in self.layers:
            hidden, residual = layer(hidden, residual, positions, cos_sin_cache, attn)
        return self.norm.add_forward_(hidden, residual)


# Every CUDA variant and the plain module it replaces (for `use_plain_layers`).
PLAIN_CLASS = {
    FusedRMSNorm: RMSNorm,
    FusedMLP: MLP,
    FusedAttention: Attention,
    TritonRopeAttention: Attention,
    CudaColumnParallelLinear: ColumnParallelLinear,
    CudaRowParallelLinear: RowParallelLinear,
    CudaDecoderLayer: DecoderLayer,
    CudaDecoderModel: DecoderModel,
}


def _one_token_fits(layer: DecoderLayer) -> bool:
    """Do the layer's four matrices fit the one-row kernel? (half precision, K <= gemv.MAX_K)"""
    from minisgl_edu.kernels import gemv

    weights = (
        layer.self_attn.qkv_proj.weight,
        layer.self_attn.o_proj.weight,
        layer.mlp.gate_up_proj.weight,
        layer.mlp.down_proj.weight,
    )
    return all(gemv.supports(torch.empty((1, w.shape[1]), dtype=w.dtype, device="meta"), w) for w in weights)


def _rope_kernel_fits(head_dim: int) -> bool:
    from minisgl_edu.kernels import qk_rope_store

    return qk_rope_store.supports(head_dim)


def use_cuda_layers(model: CausalLM, *, fused: bool = True, triton: Iterable[str] = ()) -> CausalLM:
    """Swap the CUDA variants in for the plain modules of `model` (in place; returns it).

    fused: FlashInfer's norm, RoPE and activation kernels (and with them the residual-stream
    layer). triton: names of our Triton kernels ("rope", "gemm", "gemv", "fold"; see
    `EngineConfig.triton_kernels`; "rope" and "fold" need `fused`). The caller decides that the model runs on CUDA in half precision; the kernels are also
    correct on the CPU under Triton's interpreter, which is how the tests run them there.
    """
    from minisgl_edu.kernels import triton_available

    names = set(triton) if triton_available() else set()
    one_row = "gemm" in names and "gemv" in names
    for module in model.modules():
        if "gemm" in names and type(module) is ColumnParallelLinear:
            module.__class__, module.one_row = CudaColumnParallelLinear, one_row
        elif "gemm" in names and type(module) is RowParallelLinear:
            module.__class__, module.one_row = CudaRowParallelLinear, one_row
    if not fused:
        return model
    rope_kernel = "rope" in names and _rope_kernel_fits(model.cfg.head_dim)
    fold = "gemv" in names and "fold" in names and get_tp_size() == 1
    for module in model.modules():
        if type(module) is RMSNorm:
            module.__class__ = FusedRMSNorm
        elif type(module) is MLP:
            module.__class__ = FusedMLP
        elif type(module) is Attention:
            module.__class__ = TritonRopeAttention if rope_kernel else FusedAttention
        elif type(module) is DecoderLayer:
            module.__class__ = CudaDecoderLayer
            module.fold = fold and _one_token_fits(module)
        elif type(module) is DecoderModel:
            module.__class__ = CudaDecoderModel
    return model


def use_plain_layers(model: CausalLM) -> CausalLM:
    """Undo `use_cuda_layers`: every module back to its plain class (in place; returns it)."""
    for module in model.modules():
        plain = PLAIN_CLASS.get(type(module))
        if plain is not None:
            module.__class__ = plain
    return model
