"""`ModelConfig`: the few numbers about a model that the engine needs.

Where this sits on the request path: before any request arrives. The server reads the model's
`config.json` (and `generation_config.json`) into a `ModelConfig`; the engine uses it to build the
model (`create_model`), to size the KV pool (layers x kv heads x head dim), and the scheduler uses
`eos_token_ids` to know when a request is finished.

Hugging Face config files come in several generations. The two that matter here:

* older files (transformers 4.x): `rope_theta` at the top level and an optional `rope_scaling`
  dict whose type key is `type` (very old) or `rope_type`;
* transformers 5 files: a single `rope_parameters` dict holding `rope_theta`, `rope_type` and the
  scaling keys.

`from_hf` accepts both and normalises them to `rope_theta` + `rope_scaling` (None for plain RoPE).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import torch

# The HF class name in `architectures` -> our architecture name. All three are the same decoder
# with small differences (see `decoder.py`).
ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
}

# RoPE variants that `rope.py` implements. "dynamic" (dynamic NTK) only changes the frequencies
# beyond `max_position_embeddings`, which the engine never allows, so it is plain RoPE here.
SUPPORTED_ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")

_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float": torch.float32,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
}


def parse_dtype(value: str | torch.dtype | None, default: torch.dtype = torch.float32) -> torch.dtype:
    """'bfloat16', 'torch.bfloat16' or torch.bfloat16 -> torch.bfloat16 (None -> default)."""
    if value is None:
        return default
    if isinstance(value, torch.dtype):
        return value
    name = str(value).removeprefix("torch.")
    if name not in _DTYPES:
        raise ValueError(f"unsupported dtype {value!r} (choose one of {sorted(set(_DTYPES))})")
    return _DTYPES[name]


@dataclass
class ModelConfig:
    arch: str  # "llama" | "qwen2" | "qwen3"
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int  # query heads
    num_kv_heads: int  # key/value heads (fewer than query heads: grouped-query attention)
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: dict[str, Any] | None  # None: plain RoPE; else has "rope_type" and its parameters
    max_position_embeddings: int
    tie_word_embeddings: bool  # lm_head shares the embedding matrix (SmolLM2, small Qwens)
    attention_bias: bool = False  # bias on q/k/v projections (Qwen2: always)
    o_proj_bias: bool = False  # bias on the output projection (Llama/Qwen3 with attention_bias)
    mlp_bias: bool = False  # bias on gate/up/down (Llama option, off in practice)
    qk_norm: bool = False  # RMSNorm on each head of q and k before RoPE (Qwen3)
    eos_token_ids: list[int] = field(default_factory=list)
    bos_token_id: int | None = None
    dtype: torch.dtype = torch.float32  # the dtype the checkpoint was saved in
    model_path: str = ""  # where it was read from, for messages

    @property
    def q_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim

    @classmethod
    def from_hf(
        cls,
        config: dict[str, Any] | Any,
        generation_config: dict[str, Any] | Any | None = None,
        model_path: str = "",
    ) -> ModelConfig:
        """Build from a config.json dict or a `transformers` config object."""
        d = _as_dict(config)
        g = _as_dict(generation_config) if generation_config is not None else {}

        arch = _arch_of(d)
        if d.get("hidden_act", "silu") != "silu":
            raise ValueError(f"only SiLU (SwiGLU) MLPs are supported, got hidden_act={d['hidden_act']!r}")
        if d.get("use_sliding_window") or "sliding_attention" in (d.get("layer_types") or []):
            raise NotImplementedError("sliding-window attention layers are not supported")

        num_heads = d["num_attention_heads"]
        hidden = d["hidden_size"]
        rope_theta, rope_scaling = _parse_rope(d)

        # Qwen2 always has q/k/v biases (its config has no switch for it); Llama and Qwen3 use
        # `attention_bias` for q/k/v *and* o.
        if arch == "qwen2":
            attention_bias, o_proj_bias = True, False
        else:
            attention_bias = o_proj_bias = bool(d.get("attention_bias", False))

        eos: list[int] = []
        for source in (g.get("eos_token_id"), d.get("eos_token_id")):
            for t in source if isinstance(source, list) else [source]:
                if t is not None and int(t) not in eos:
                    eos.append(int(t))
        bos = g.get("bos_token_id", d.get("bos_token_id"))

        return cls(
            arch=arch,
            vocab_size=d["vocab_size"],
            hidden_size=hidden,
            intermediate_size=d["intermediate_size"],
            num_layers=d["num_hidden_layers"],
            num_heads=num_heads,
            num_kv_heads=d.get("num_key_value_heads") or num_heads,
            head_dim=d.get("head_dim") or hidden // num_heads,
            rms_norm_eps=float(d.get("rms_norm_eps", 1e-6)),
            rope_theta=rope_theta,
            rope_scaling=rope_scaling,
            max_position_embeddings=d.get("max_position_embeddings", 2048),
            # transformers 5 defaults this to False for all three architectures.
            tie_word_embeddings=bool(d.get("tie_word_embeddings", False)),
            attention_bias=attention_bias,
            o_proj_bias=o_proj_bias,
            mlp_bias=bool(d.get("mlp_bias", False)) if arch == "llama" else False,
            qk_norm=arch == "qwen3",
            eos_token_ids=eos,
            bos_token_id=int(bos) if bos is not None else None,
            dtype=parse_dtype(d.get("dtype") or d.get("torch_dtype")),
            model_path=model_path,
        )

    @classmethod
    def from_dir(cls, path: str) -> ModelConfig:
        """Read `config.json` (and `generation_config.json` when present) from a model directory."""
        with open(os.path.join(path, "config.json")) as f:
            config = json.load(f)
        generation_config = None
        gen_path = os.path.join(path, "generation_config.json")
        if os.path.exists(gen_path):
            with open(gen_path) as f:
                generation_config = json.load(f)
        return cls.from_hf(config, generation_config, model_path=path)


def _as_dict(config: Any) -> dict[str, Any]:
    if isinstance(config, dict):
        return config
    return config.to_dict()  # a transformers PretrainedConfig / GenerationConfig


def _arch_of(d: dict[str, Any]) -> str:
    for name in d.get("architectures") or []:
        if name in ARCHITECTURES:
            return ARCHITECTURES[name]
    if d.get("model_type") in ARCHITECTURES.values():
        return d["model_type"]
    found = d.get("architectures") or d.get("model_type")
    raise ValueError(f"unsupported model architecture {found!r}; supported: {sorted(ARCHITECTURES)}")


def _parse_rope(d: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """-> (rope_theta, rope_scaling or None), from either config generation."""
    # transformers 5 keeps everything in `rope_parameters`; older files split it in two.
    params = dict(d.get("rope_scaling") or {})
    params.update(d.get("rope_parameters") or {})
    theta = float(params.pop("rope_theta", d.get("rope_theta", 10000.0)))
    if params.pop("partial_rotary_factor", d.get("partial_rotary_factor", 1.0)) not in (1, 1.0, None):
        raise NotImplementedError("partial rotary embeddings are not supported")

    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    params.pop("type", None)
    if rope_type not in SUPPORTED_ROPE_TYPES:
        raise NotImplementedError(f"RoPE type {rope_type!r} is not supported (have {SUPPORTED_ROPE_TYPES})")
    if rope_type == "default":
        return theta, None
    if rope_type in ("llama3", "yarn"):
        # Same fallback as transformers: the pre-training length defaults to the model's length.
        params.setdefault("original_max_position_embeddings", d.get("max_position_embeddings", 2048))
    return theta, {"rope_type": rope_type, **params}
