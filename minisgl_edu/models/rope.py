"""Rotary position embedding (RoPE): how a token's position enters attention.

Where this sits on the request path: inside the model's forward pass, once per batch. Each
query/key vector is cut into pairs of numbers, and pair i is rotated by the angle
`position * inv_freq[i]`. The dot product of a rotated query and a rotated key then depends only
on their *distance*, which is why a K vector written into the KV cache once stays valid for every
later query: the cache never needs to be recomputed.

The engine batches tokens of many requests in one flat dimension, each at its own absolute
position. So instead of computing angles per layer, we build a table `cos[pos, i], sin[pos, i]`
once (float32, at model creation) and look up the rows for the batch's `positions` once per
forward; all layers share them.

Pairing convention: Llama/Qwen checkpoints in HF format pair element i with element i + D/2
(the "rotate_half" or GPT-NeoX style), not neighbouring elements (GPT-J style).

Long-context variants change only `inv_freq` (and, for YaRN, scale cos/sin by an "attention
factor"), following transformers' `ROPE_INIT_FUNCTIONS`:

* linear: positions are squeezed by `factor` (all frequencies divided by it);
* dynamic NTK: identical to plain RoPE up to `max_position_embeddings`, which the engine never
  exceeds, so we treat it as plain;
* llama3: low frequencies divided by `factor`, high ones kept, smooth blend in between;
* yarn: per-frequency blend of interpolation and extrapolation, plus the attention factor.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn


def default_inv_freq(head_dim: int, theta: float) -> torch.Tensor:
    """inv_freq[i] = theta^(-2i/D): pair 0 turns fastest, the last pair slowest."""
    return 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))


def llama3_inv_freq(inv_freq: torch.Tensor, scaling: dict[str, Any]) -> torch.Tensor:
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_len = scaling["original_max_position_embeddings"]

    # Wavelength = tokens per full turn. Short wavelengths (shorter than the pre-training length
    # by a margin) encode local order and are kept; long ones are stretched by `factor`.
    wavelen = 2 * math.pi / inv_freq
    low_freq_wavelen = old_len / low_freq_factor
    high_freq_wavelen = old_len / high_freq_factor
    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)
    return torch.where(is_medium, blended, scaled)


def yarn_inv_freq(
    head_dim: int, theta: float, scaling: dict[str, Any], max_position_embeddings: int
) -> tuple[torch.Tensor, float]:
    """-> (inv_freq, attention_factor) for YaRN (https://arxiv.org/abs/2309.00071)."""
    old_len = scaling["original_max_position_embeddings"]
    factor = scaling.get("factor") or max_position_embeddings / old_len
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        m, m_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
        attention_factor = mscale(factor, m) / mscale(factor, m_all) if m and m_all else mscale(factor)

    # The pair index whose frequency makes `num_rotations` full turns over the original length.
    def correction_dim(num_rotations: float) -> float:
        return head_dim * math.log(old_len / (num_rotations * 2 * math.pi)) / (2 * math.log(theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001  # avoid dividing by zero in the ramp

    pos_freqs = theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    extrapolation = 1.0 / pos_freqs  # fast pairs: keep as trained
    interpolation = 1.0 / (factor * pos_freqs)  # slow pairs: squeeze positions like "linear"
    ramp = torch.clamp((torch.arange(head_dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    keep = 1 - ramp  # 1 for fast pairs, 0 for slow ones, linear in between
    inv_freq = interpolation * (1 - keep) + extrapolation * keep
    return inv_freq, float(attention_factor)


def compute_inv_freq(
    head_dim: int, theta: float, scaling: dict[str, Any] | None, max_position_embeddings: int
) -> tuple[torch.Tensor, float]:
    """-> (inv_freq [head_dim/2] float32, attention_factor applied to cos and sin)."""
    rope_type = scaling["rope_type"] if scaling else "default"
    if rope_type in ("default", "dynamic"):
        return default_inv_freq(head_dim, theta), 1.0
    if rope_type == "linear":
        return default_inv_freq(head_dim, theta) / scaling["factor"], 1.0
    if rope_type == "llama3":
        return llama3_inv_freq(default_inv_freq(head_dim, theta), scaling), 1.0
    if rope_type == "yarn":
        return yarn_inv_freq(head_dim, theta, scaling, max_position_embeddings)
    raise NotImplementedError(f"RoPE type {rope_type!r}")


class RotaryEmbedding(nn.Module):
    """A float32 table of cos/sin for every position up to `max_positions`."""

    def __init__(
        self,
        head_dim: int,
        max_positions: int,
        theta: float,
        scaling: dict[str, Any] | None = None,
        max_position_embeddings: int | None = None,
    ) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.max_positions = max_positions
        self.theta = theta
        self.scaling = scaling
        self.max_position_embeddings = max_position_embeddings or max_positions
        # Not saved in checkpoints (persistent=False): it is derived from the config.
        self.register_buffer("cos_cache", torch.empty(0), persistent=False)
        self.register_buffer("sin_cache", torch.empty(0), persistent=False)
        # cat(cos, sin) per position, [max_positions, head_dim] float32: the layout FlashInfer's
        # `apply_rope_with_cos_sin_cache_inplace` reads. Built on first use (the CUDA path only).
        self.register_buffer("cos_sin_cache", torch.empty(0), persistent=False)
        self.build_cache()

    def build_cache(self, device: torch.device | str | None = None) -> None:
        """(Re)compute the table, in float32, on `device` (default: where the table is now)."""
        device = device if device is not None else self.cos_cache.device
        if torch.device(device).type == "meta":
            return  # a shapes-only model (e.g. to count parameters) needs no table
        inv_freq, attention_factor = compute_inv_freq(
            self.head_dim, self.theta, self.scaling, self.max_position_embeddings
        )
        inv_freq = inv_freq.to(device)
        positions = torch.arange(self.max_positions, dtype=torch.float32, device=device)
        angles = positions[:, None] * inv_freq[None, :]  # [max_positions, D/2]
        self.cos_cache = angles.cos() * attention_factor
        self.sin_cache = angles.sin() * attention_factor
        self.cos_sin_cache = torch.empty(0, device=device)  # rebuilt by `cos_sin_table`

    def cos_sin_table(self) -> torch.Tensor:
        """The float32 [max_positions, head_dim] table cat(cos, sin), for FlashInfer's RoPE kernel.

        Built from cos_cache/sin_cache the first time (an eager forward, before any CUDA graph is
        captured), then reused: no per-batch lookup, the kernel reads the rows it needs.
        """
        if self.cos_sin_cache.numel() == 0 or self.cos_sin_cache.device != self.cos_cache.device:
            self.cos_sin_cache = torch.cat((self.cos_cache, self.sin_cache), dim=-1).contiguous()
        return self.cos_sin_cache

    def lookup(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin for each token, [T, D] each, in the dtype of q and k (as transformers does).

        Laid out for `apply_rotary`: cos = [cos, cos] and sin = [-sin, sin] over the two halves.
        """
        cos, sin = self.cos_cache[positions], self.sin_cache[positions]
        return torch.cat((cos, cos), dim=-1).to(dtype), torch.cat((-sin, sin), dim=-1).to(dtype)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x [T, H, D] by the angles of its token: pair (i, i + D/2) is one 2-D point.

    With x = [x1, x2] and the tables of `RotaryEmbedding.lookup` ([T, D] each), this is
    [x1 cos - x2 sin, x2 cos + x1 sin]: transformers' `x * cos + rotate_half(x) * sin`, where
    rolling x by D/2 swaps its halves and the table's -sin carries rotate_half's minus sign.
    Three elementwise ops and a roll instead of a split, six ops and a cat; the same numbers.
    """
    swapped = x.roll(x.shape[-1] // 2, dims=-1)  # [x2, x1]
    return x * cos[:, None, :] + swapped * sin[:, None, :]  # broadcast over heads
