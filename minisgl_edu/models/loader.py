"""Load a model from a Hugging Face directory: config.json + *.safetensors.

Where this sits on the request path: at start-up, before the first request. The scheduler process
calls `load_model` once; the model then stays in memory for every batch.

safetensors files are memory-mapped, so reading a tensor costs one copy from the page cache
straight into the model's (already allocated) parameter: no pickle, no second copy of the model.
Large checkpoints are split into shards listed in `model.safetensors.index.json`; we simply read
every shard the index names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import torch

from minisgl_edu.models.config import ModelConfig, parse_dtype
from minisgl_edu.models.decoder import CausalLM, create_model


def safetensors_files(model_dir: str) -> list[str]:
    """The weight files of a checkpoint directory, sharded or not."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        return [os.path.join(model_dir, s) for s in shards]
    files = sorted(f for f in os.listdir(model_dir) if f.endswith(".safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors weights in {model_dir}")
    return [os.path.join(model_dir, f) for f in files]


def iter_safetensors(model_dir: str) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield (HF name, tensor) for every tensor of every shard, one at a time (low peak memory)."""
    from safetensors import safe_open

    for path in safetensors_files(model_dir):
        with safe_open(path, framework="pt", device="cpu") as f:
            for name in f.keys():
                yield name, f.get_tensor(name)


def load_model(
    path_or_name: str,
    dtype: torch.dtype | str | None = None,
    device: torch.device | str = "cpu",
) -> tuple[CausalLM, ModelConfig]:
    """-> (model in eval mode with the checkpoint's weights, its config).

    `path_or_name` is anything `resolve_model` accepts: a local directory, the alias
    `smollm2-135m` (converted from the bundled GGUF on first use) or a hub id. `dtype=None` keeps
    the checkpoint's dtype.
    """
    from minisgl_edu.models.registry import resolve_model

    model_dir = resolve_model(path_or_name)
    cfg = ModelConfig.from_dir(model_dir)
    dtype = parse_dtype(dtype, default=cfg.dtype)
    model = create_model(cfg, dtype, device, random_init=False)
    model.load_weights(iter_safetensors(model_dir))
    if model.model.embed_tokens.weight.device.type == "cpu" and dtype == torch.float32:
        store_weights_input_major(model)
    return model, cfg


@torch.no_grad()
def store_weights_input_major(model: torch.nn.Module) -> None:
    """CPU, float32: keep every matmul weight in memory as [in, out] (W^T contiguous).

    `F.linear(x, W)` computes x @ W^T. With W stored [out, in] (the checkpoint's layout), MKL's
    sgemm reads W^T as a transposed operand, which is slower for the small batches of a decode
    step (a handful of rows against a big matrix). Storing the same numbers transposed makes W^T
    a plain contiguous matrix. `weight` keeps its shape [out, in] (it is a transposed view of the
    new storage), so no layer's code changes and the memory used is the same. Measured on the
    course machine (2-core Xeon, SmolLM2-135M, the 16-request benchmark, layouts alternated):
    +15% to +43% tok/s in four pairs out of five, -10% in one (docs/benchmarks.md); no gain in
    bfloat16 (oneDNN packs bf16 weights itself), so float32 only.
    The tied embedding shares the matrix: a row lookup is then a strided read, cheap next to the
    logits matmul it speeds up.
    """
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.nn.Parameter) and weight.dim() == 2 and weight.is_contiguous():
            weight.data = weight.data.t().contiguous().t()  # same values, [in, out] in memory
