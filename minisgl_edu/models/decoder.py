"""The decoder-only model: Llama, Qwen2 and Qwen3 in one class.

Where this sits on the request path: `Engine.forward_batch` prepares the attention backend for the
batch, then calls

    hidden = model(input_ids, positions, attn)     # [T, hidden], all tokens of all requests
    logits = model.compute_logits(hidden[last])    # [N, vocab] float32, only where we sample

`input_ids` and `positions` are flat over the batch: request 0's new tokens, then request 1's,
and so on; `positions` are absolute positions in each request (a decode token of a request with
40 cached tokens has position 40). The final RMSNorm is applied in `forward`, so `compute_logits`
is just the output projection. The engine only asks for logits of the tokens it samples from
(the last token of each request): the vocab projection is the largest matmul of a small model.

The three architectures differ in small, switchable ways (see `ModelConfig`):

| | q/k/v bias | o bias | q/k RMSNorm |
|---|---|---|---|
| Llama (SmolLM2, Llama 3) | `attention_bias` (off) | same | no |
| Qwen2 / Qwen2.5 | yes | no | no |
| Qwen3 | `attention_bias` (off) | same | yes |

Parameter names follow the HF checkpoints (`model.layers.0.self_attn.o_proj.weight` ...) except
the two fused matrices `qkv_proj` and `gate_up_proj`, which `load_weights` fills piece by piece.

This is the plain PyTorch model. On CUDA in half precision the engine swaps faster variants in for
its modules once, after loading (`models/cuda_layers.py`, `use_cuda_layers`); the parameters and
their names stay the same.

With tensor parallelism (`minisgl_edu.distributed`) each rank builds the same modules with 1/tp of
the heads, MLP columns and vocabulary rows, and `load_weights` cuts this rank's slice out of each
full checkpoint tensor; `compute_logits` still returns the full [N, vocab] on every rank.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from minisgl_edu.attention.base import AttentionBackend
from minisgl_edu.distributed import get_tp_rank, get_tp_size
from minisgl_edu.distributed.linear import ParallelLMHead, VocabParallelEmbedding
from minisgl_edu.models.config import ModelConfig
from minisgl_edu.models.layers import DecoderLayer, RMSNorm
from minisgl_edu.models.rope import RotaryEmbedding

# HF checkpoint piece -> (our fused parameter, which shard). Shard order is the row order inside
# the fused matrix: q rows first, then k, then v; gate rows, then up.
STACKED_PARAMS: dict[str, tuple[str, str]] = {
    "q_proj": ("qkv_proj", "q"),
    "k_proj": ("qkv_proj", "k"),
    "v_proj": ("qkv_proj", "v"),
    "gate_proj": ("gate_up_proj", "gate"),
    "up_proj": ("gate_up_proj", "up"),
}


class DecoderModel(nn.Module):
    """Embedding -> N decoder layers -> final norm. Named `model.` in HF checkpoints."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        # One RoPE table for all layers: every layer rotates by the same angles.
        self.rotary_emb = RotaryEmbedding(
            cfg.head_dim,
            max_positions=cfg.max_position_embeddings,
            theta=cfg.rope_theta,
            scaling=cfg.rope_scaling,
            max_position_embeddings=cfg.max_position_embeddings,
        )

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionBackend) -> torch.Tensor:
        hidden = self.embed_tokens(input_ids)
        cos_sin = self.rotary_emb.lookup(positions, hidden.dtype)  # once per batch, not per layer
        for layer in self.layers:
            hidden = layer(hidden, cos_sin, attn)
        return self.norm(hidden)


class CausalLM(nn.Module):
    """A decoder plus the output projection to vocabulary logits."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.model = DecoderModel(cfg)
        if cfg.tie_word_embeddings:
            # Small models reuse the input embedding as the output projection (saves vocab x hidden
            # parameters: 28M of SmolLM2's 135M). Same module, so the same tensor.
            self.lm_head = self.model.embed_tokens
        else:
            self.lm_head = ParallelLMHead(cfg.vocab_size, cfg.hidden_size)  # weight [vocab, hidden]

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionBackend) -> torch.Tensor:
        """-> final hidden states [T, hidden] (already normalised). The backend must be prepared."""
        return self.model(input_ids, positions, attn)

    @torch.inference_mode()
    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[N, hidden] -> [N, vocab] float32 scores (the sampler wants float32 for softmax).

        With tensor parallelism every rank scores its vocabulary shard and the shards are
        all-gathered, so every rank has the same full logits and samples the same token.
        """
        return self.lm_head.compute_logits(hidden).float()

    @torch.no_grad()
    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy HF-named tensors (`name, tensor` pairs, e.g. from safetensors) into the model.

        Checks that every parameter was filled exactly once and that no name is left over, so a
        mapping mistake fails loudly instead of leaving random weights behind.
        """
        params = dict(self.named_parameters())  # a tied lm_head appears once, as embed_tokens
        cfg = self.cfg
        # Rows of each piece inside a fused matrix; with tensor parallelism, of this rank's part.
        tp_rank, tp_size = get_tp_rank(), get_tp_size()
        q, kv, inter = cfg.q_size // tp_size, cfg.kv_size // tp_size, cfg.intermediate_size // tp_size
        shard_rows = {
            "q": (0, q),
            "k": (q, kv),
            "v": (q + kv, kv),
            "gate": (0, inter),
            "up": (inter, inter),
        }
        # Which parts of which parameter are filled: a plain parameter needs {"all"}, a fused one
        # one entry per shard.
        loaded: dict[str, set[str]] = {}
        for name, tensor in weights:
            if "rotary_emb.inv_freq" in name:
                continue  # old checkpoints saved the RoPE frequencies; we compute them
            if name == "lm_head.weight" and cfg.tie_word_embeddings:
                continue  # some tied checkpoints still store a copy
            target, shard = name, "all"
            for piece, (fused, shard_name) in STACKED_PARAMS.items():
                if f".{piece}." in name:
                    target, shard = name.replace(f".{piece}.", f".{fused}."), shard_name
                    break
            if target not in params:
                raise KeyError(f"checkpoint tensor {name!r} has no place in the {cfg.arch} model")
            param = params[target]
            dest = param.data if shard == "all" else param.data.narrow(0, *shard_rows[shard])
            tp_dim = getattr(param, "tp_dim", None)
            if tp_size > 1 and tp_dim is not None:
                dest, tensor = _rank_slice(dest, tensor, tp_dim, tp_rank)
            if dest.shape != tensor.shape:
                raise ValueError(f"{name}: checkpoint shape {tuple(tensor.shape)}, model wants {tuple(dest.shape)}")
            if shard in loaded.setdefault(target, set()):
                raise ValueError(f"checkpoint tensor {name!r} appears twice")
            dest.copy_(tensor)  # converts dtype and device as needed
            loaded[target].add(shard)

        missing = []
        for target in params:
            want = {"all"}
            if ".qkv_proj." in target:
                want = {"q", "k", "v"}
            elif ".gate_up_proj." in target:
                want = {"gate", "up"}
            if loaded.get(target, set()) != want:
                missing.append(target)
        if missing:
            raise ValueError(f"checkpoint is missing {len(missing)} tensors, e.g. {missing[:5]}")


def _rank_slice(dest: torch.Tensor, full: torch.Tensor, dim: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's slice of a full checkpoint tensor, split along `dim` into `dest`-sized pieces.

    Rank r takes rows [r * n, (r + 1) * n) of `full` along `dim`, n = dest.shape[dim]. A padded
    vocabulary shard gets fewer real rows than it holds: the rest stay zero.
    """
    n = dest.shape[dim]
    start = min(rank * n, full.shape[dim])
    real = min(n, full.shape[dim] - start)
    if real < n:
        dest.zero_()
        dest = dest.narrow(dim, 0, real)
    return dest, full.narrow(dim, start, real)


class LlamaForCausalLM(CausalLM):
    """Llama 2/3, SmolLM2: the plain decoder."""


class Qwen2ForCausalLM(CausalLM):
    """Qwen2 / Qwen2.5: Llama plus biases on the q/k/v projections."""


class Qwen3ForCausalLM(CausalLM):
    """Qwen3: Llama plus an RMSNorm on each query and key head before RoPE."""


MODEL_CLASSES: dict[str, type[CausalLM]] = {
    "llama": LlamaForCausalLM,
    "qwen2": Qwen2ForCausalLM,
    "qwen3": Qwen3ForCausalLM,
}


def create_model(
    cfg: ModelConfig,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
    *,
    random_init: bool = True,
    seed: int = 0,
) -> CausalLM:
    """Build the model for `cfg` on `device` in `dtype`, in evaluation mode.

    random_init=True fills it with small random weights (seeded: tests and notebooks get the same
    model every time); False leaves memory uninitialised, for `load_weights` to fill (faster).
    """
    # Allocate every parameter once, directly on the device and in the dtype we want (as SGLang
    # does): no float32 copy on the CPU first, then a conversion. The RoPE table asks for float32
    # explicitly, so the default dtype does not touch it.
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = MODEL_CLASSES[cfg.arch](cfg)
    finally:
        torch.set_default_dtype(previous)
    if random_init:
        init_random_weights(model, seed)
    return model.eval()


@torch.no_grad()
def init_random_weights(model: CausalLM, seed: int = 0) -> None:
    """Normal(0, 0.02) matrices, ones for norms, zeros for biases (the usual HF init)."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    for name, param in model.named_parameters():
        if name.endswith("norm.weight"):
            param.fill_(1.0)
        elif name.endswith(".bias"):
            param.zero_()
        else:
            # Drawn on the CPU generator so the weights are the same on every device.
            param.copy_(torch.randn(param.shape, generator=gen) * 0.02)
