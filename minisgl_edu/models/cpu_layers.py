"""CPU variants of the model's matmuls: float16 or int4 weights, float32 math between them.

Where this sits on the request path: the same place as `layers.py` (every forward pass of
`Engine.forward_batch`), on CPU in float32 when the engine is built with
`EngineConfig.cpu_weights` "float16" or "int4" (the server's default on CPU is "auto": int4 where
the CPU and the model allow it, else float16; `--cpu-weights float32` for the exact model). The
plain modules stay the reference: this file only changes how the weights of the linear layers and
of the logits are stored and multiplied.

Why: on a laptop a decode step of a small batch is bound by memory bandwidth, not arithmetic.
Every step reads every weight matrix once; SmolLM2-135M's 30 layers are 425 MB in float32, and the
tied 49,152 x 576 logits matrix another 113 MB.

* float16: FBGEMM (the CPU matmul library inside PyTorch, `torch.ops.quantized.linear_dynamic_fp16`)
  keeps the matrix in float16, packed in the blocks its AVX2/AVX-512 kernel reads, converts each
  block to float32 in registers and multiplies in float32: half the bytes, and activations, sums
  and everything between the matmuls stay float32. float16 keeps 11 significant bits against
  bfloat16's 8: each weight moves by at most 2^-11 of its value (the 0.3% of SmolLM2's weights
  below 6e-5, float16's smallest normal number, by less than 3e-8), and none comes near float16's
  largest value (SmolLM2's largest is 9.25). The greedy tokens of the course's prompts stay those
  of float32 for dozens of tokens.
* int4: the bundled model comes from a Q4_1 GGUF file, so each layer's float32 weights are 4-bit
  blocks (32 weights sharing a scale and a minimum) written out; `int4_blocks` finds them again,
  exactly, and torch's CPU int4 matmul (`torch._weight_int4pack_mm_for_cpu`) reads them: a quarter
  of float16's bytes. That kernel takes its input, its scales and zero points in bfloat16 and gives
  bfloat16, so each layer matmul rounds to 8 significant bits at both ends; the logits stay
  float16. It is fast only where the CPU has AVX512-BF16 (`int4_is_fast`) and half the greedy
  answers leave float32's within 64 tokens, at the same log-likelihood.

Both are measured by `python -m minisgl_edu.bench.cpu_weights` (docs/benchmarks.md, "CPU weight
formats"). int8 with FBGEMM's per-tensor activation scale changed the first tokens of most
answers, so it is not offered.

| plain module | CPU variant | what changes |
|---|---|---|
| `ColumnParallelLinear`, `RowParallelLinear` | `PackedColumnParallelLinear`, `PackedRowParallelLinear` | the float32 matrix is packed to float16 once, then dropped |
| the same, int4 | `Int4ColumnParallelLinear`, `Int4RowParallelLinear` | the float32 matrix becomes packed 4-bit blocks once, then is dropped |
| `VocabParallelEmbedding` (tied logits) | `PackedLogitsEmbedding` | the lookup still reads the float32 rows; the logits matmul reads a float16 packed copy |
| `ParallelLMHead` (untied logits) | `PackedLMHead` | the float16 copy replaces the float32 matrix |

`use_cpu_layers(model, weights)` does the swap as `cuda_layers.use_cuda_layers` does: it changes
the class of each module in place and packs its weight, once, after loading.
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


# int4 (`cpu_weights="int4"`): torch's CPU int4 matmul over groups of 32 weights along the input,
# the layout of the Q4_1 blocks the bundled GGUF file stores. Each block is w = scale * q + min
# with q in 0..15; the kernel computes w = (q - 8) * scale + zero, so zero = min + 8 * scale.
INT4_GROUP = 32


def int4_blocks(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """The 4-bit blocks a float32 [out, in] matrix was dequantized from: (q int32 [out, in],
    scale and min [out, in / 32]) with q * scale + min equal to `weight` in every element, or None
    if `weight` is not on such a grid (a model that did not come from 4-bit blocks)."""
    out_features, in_features = weight.shape
    if in_features % INT4_GROUP:
        return None
    w = weight.detach().float().reshape(out_features, in_features // INT4_GROUP, INT4_GROUP)
    low, high = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    scale = (high - low) / 15  # the smallest weight of a block has q = 0, the largest q = 15
    q = torch.round((w - low) / scale.clamp(min=torch.finfo(torch.float32).tiny)).clamp(0, 15)
    if not torch.equal(q * scale + low, w):
        return None
    return q.to(torch.int32).reshape(out_features, in_features), scale.squeeze(-1), low.squeeze(-1)


def pack_int4(blocks: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """A matrix's 4-bit blocks (`int4_blocks`) -> (the kernel's packed int4 weight, its scales and
    zero points [in / 32, out, 2] in bfloat16, the dtype the kernel takes them in)."""
    q, scale, low = blocks
    packed = torch._convert_weight_to_int4pack_for_cpu(q, 1)
    scales_zeros = torch.stack([scale, low + 8 * scale], dim=-1).transpose(0, 1).contiguous()
    return packed, scales_zeros.to(torch.bfloat16)


def _int4_matmul(x: torch.Tensor, layer: nn.Module) -> torch.Tensor:
    """x float32 [T, in] -> float32 [T, out]: the kernel reads x and writes its result in bfloat16."""
    y = torch._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16), layer.packed, INT4_GROUP, layer.scales_zeros)
    return y.float()


class Int4ColumnParallelLinear(ColumnParallelLinear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _int4_matmul(x, self)
        return y if self.bias is None else y + self.bias


class Int4RowParallelLinear(RowParallelLinear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _int4_matmul(x, self)
        if self.tp_size > 1:
            y = all_reduce(y)
        return y if self.bias is None else y + self.bias


def int4_is_fast() -> bool:
    """Whether this CPU has AVX512-BF16, without which torch's int4 CPU matmul is slower than even
    float32 (3.5x on an AVX2 EPYC, docs/benchmarks.md). Read from /proc/cpuinfo: False where there
    is none."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512_bf16" in line for line in f)
    except OSError:
        return False


def _linear_layers(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if type(m) in (ColumnParallelLinear, RowParallelLinear)]


def int4_layer_blocks(model: nn.Module) -> dict[nn.Module, tuple] | None:
    """Every linear layer's 4-bit blocks (`int4_blocks`), or None unless all of them have some, as
    the layers of a model loaded from a Q4_1 GGUF file do."""
    blocks = {m: int4_blocks(m.weight) for m in _linear_layers(model)}
    return blocks if blocks and all(b is not None for b in blocks.values()) else None


def use_cpu_layers(model: nn.Module, weights: str = "float16") -> str:
    """Pack every linear layer's weights as `weights` says and the logits' to float16 (in place);
    returns the format the layers got.

    `weights`: "float16", "int4" (the layers must be 4-bit blocks), or "auto" (the server's
    default): int4 where this CPU runs it fast and the layers are 4-bit blocks, otherwise float16.
    The 4-bit blocks are found once, for the choice and the packing.

    The float32 matrices of the linear layers are dropped (`weight` becomes None), so the model
    holds about half the bytes (float16) or less; a tied embedding keeps its float32 rows for the
    lookup. The logits stay float16 with int4 layers too: rounded to bfloat16 they change the answers.
    """
    if weights not in ("float16", "int4", "auto"):
        raise ValueError(f"weights must be float16, int4 or auto, got {weights!r}")
    blocks = None
    if weights == "int4" or (weights == "auto" and int4_is_fast()):
        blocks = int4_layer_blocks(model)
        if blocks is None and weights == "int4":
            raise ValueError(
                "cpu_weights='int4' needs weights on a 4-bit grid (groups of 32, as in the Q4_1 GGUF file "
                "the default model comes from); this model's are not: use cpu_weights='float16'"
            )
    pack_linear_layers(model, int4=blocks)
    pack_logits(model.lm_head)
    return "float16" if blocks is None else "int4"


@torch.no_grad()
def pack_linear_layers(model: nn.Module, int4: dict[nn.Module, tuple] | None = None) -> None:
    """Every column- and row-parallel linear layer of `model` to its packed variant: int4 from the
    layer's blocks in `int4` (`int4_layer_blocks`) when given, float16 otherwise."""
    for module in _linear_layers(model):
        column = type(module) is ColumnParallelLinear
        if int4 is not None:
            module.packed, module.scales_zeros = pack_int4(int4[module])
            module.__class__ = Int4ColumnParallelLinear if column else Int4RowParallelLinear
            module.weight = None  # the bias stays a float32 parameter, added after the matmul
            continue
        # A row-parallel layer over several ranks adds its bias after the all-reduce.
        bias_inside = column or module.tp_size == 1
        module.packed = pack_fp16(module.weight, module.bias if bias_inside else None)
        module.__class__ = PackedColumnParallelLinear if column else PackedRowParallelLinear
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
