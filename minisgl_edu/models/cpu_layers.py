"""CPU variants of the model's matmuls: float16 weights packed for FBGEMM, float32 math.

Where this sits on the request path: the same place as `layers.py` (every forward pass of
`Engine.forward_batch`), on CPU in float32 when the engine is built with
`EngineConfig.cpu_weights = "float16"` (the server's default on CPU; `--cpu-weights float32` for
the exact model). The plain modules stay the reference: this file only changes how the weights of
the linear layers and of the logits are stored and multiplied.

Why: on a laptop a decode step of a small batch is bound by memory bandwidth, not arithmetic.
Every step reads every weight matrix once; SmolLM2-135M's 30 layers are 425 MB in float32, and the
tied 49,152 x 576 logits matrix another 113 MB. Stored as float16 they are half that. FBGEMM (the
CPU matmul library inside PyTorch, `torch.ops.quantized.linear_dynamic_fp16`) keeps the matrix
in float16, packed in the blocks its AVX2/AVX-512 kernel reads, converts each block to float32 in
registers and multiplies in float32: activations, sums and everything between the matmuls stay
float32. float16 keeps 11 significant bits against bfloat16's 8: each weight moves by at most
2^-11 of its value (the 0.3% of SmolLM2's weights below 6e-5, float16's smallest normal number, by
less than 3e-8), and none comes near float16's largest value (SmolLM2's largest is 9.25). The
greedy tokens of the course's prompts stay those of float32 for dozens of tokens
(docs/benchmarks.md, "CPU weight formats", measured by `python -m minisgl_edu.bench.cpu_weights`). int8 with FBGEMM's per-tensor activation scale was
faster still, but it changed the first tokens of most answers, so it is not offered.

| plain module | CPU variant | what changes |
|---|---|---|
| `ColumnParallelLinear`, `RowParallelLinear` | `PackedColumnParallelLinear`, `PackedRowParallelLinear` | the float32 matrix is packed to float16 once, then dropped |
| `VocabParallelEmbedding` (tied logits) | `PackedLogitsEmbedding` | the lookup still reads the float32 rows; the logits matmul reads a float16 packed copy |
| `ParallelLMHead` (untied logits) | `PackedLMHead` | the float16 copy replaces the float32 matrix |

`use_cpu_layers(model)` does the swap as `cuda_layers.use_cuda_layers` does: it changes the class
of each module in place and packs its weight, once, after loading.
"""

from __future__ import annotations

import torch
from torch import nn

from minisgl_edu.distributed.linear import (
    ColumnParallelLinear,
    ParallelLMHead,
    RowParallelLinear,
    VocabParallelEmbedding,
)
from minisgl_edu.distributed.parallel_state import all_reduce

# The packed-weight object FBGEMM's float16 matmul takes: made once per matrix, at start-up.
_pack = torch.ops.quantized.linear_prepack_fp16
_matmul = torch.ops.quantized.linear_dynamic_fp16  # x float32 [T, in] -> float32 [T, out]


def pack_fp16(weight: torch.Tensor, bias: torch.Tensor | None = None):
    """A float32 [out, in] matrix (and bias) -> FBGEMM's packed float16 form of it."""
    return _pack(weight.detach().float().contiguous(), None if bias is None else bias.detach().float())


class PackedColumnParallelLinear(ColumnParallelLinear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _matmul(x, self.packed)  # the bias, if any, is packed with the matrix


class PackedRowParallelLinear(RowParallelLinear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.tp_size == 1:
            return _matmul(x, self.packed)
        y = all_reduce(_matmul(x, self.packed))  # packed without the bias: it is added once, after the sum
        return y if self.bias is None else y + self.bias


class PackedLogitsEmbedding(VocabParallelEmbedding):
    def shard_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return _matmul(hidden, self.packed_logits)  # the all-gather over ranks is the plain one


class PackedLMHead(ParallelLMHead):
    shard_logits = PackedLogitsEmbedding.shard_logits


def use_cpu_layers(model: nn.Module) -> nn.Module:
    """Pack every linear layer's and the logits' weights to float16 (in place; returns `model`).

    The float32 matrices of the linear layers are dropped (`weight` becomes None), so the model
    holds about half the bytes; a tied embedding keeps its float32 rows for the lookup.
    """
    pack_linear_layers(model)
    pack_logits(model.lm_head)
    return model


@torch.no_grad()
def pack_linear_layers(model: nn.Module) -> None:
    """Every column- and row-parallel linear layer of `model` to its packed variant."""
    for module in model.modules():
        kind = type(module)
        if kind not in (ColumnParallelLinear, RowParallelLinear):
            continue
        # A row-parallel layer over several ranks adds its bias after the all-reduce.
        bias_inside = kind is ColumnParallelLinear or module.tp_size == 1
        module.packed = pack_fp16(module.weight, module.bias if bias_inside else None)
        module.__class__ = PackedColumnParallelLinear if kind is ColumnParallelLinear else PackedRowParallelLinear
        module.weight = None
        if bias_inside:
            module.bias = None


@torch.no_grad()
def pack_logits(head: VocabParallelEmbedding) -> None:
    """The output projection (`CausalLM.lm_head`) to its packed variant."""
    head.packed_logits = pack_fp16(head.weight)
    if type(head) is ParallelLMHead:
        head.__class__ = PackedLMHead
        head.weight = None  # untied: the matrix is used for nothing else
    else:
        head.__class__ = PackedLogitsEmbedding  # tied: the embedding lookup still reads its float32 rows
