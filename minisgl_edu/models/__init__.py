"""Models: Llama, Qwen2, Qwen3 as our own torch modules; config; weight loading.

Where this sits on the request path: the engine's forward pass. At start-up the server resolves
`--model` to a directory (`resolve_model`), the tokenizer workers load `load_tokenizer(dir)` and
the scheduler process loads `load_model(dir)`. For every batch the engine then calls

    hidden = model(input_ids, positions, attn_backend)   # flat [T] tokens of all requests
    logits = model.compute_logits(hidden[last_token_of_each_request])

Module map: `config` (ModelConfig), `rope` (rotary embedding), `layers` (RMSNorm, attention,
MLP, decoder layer: the plain PyTorch reference), `decoder` (the model, `create_model`,
`load_weights`), `cuda_layers` (the CUDA variants the engine swaps in on a GPU), `loader`
(safetensors), `registry` (aliases, hub ids), `convert` (bundled GGUF -> HF directory),
`testing` (run a model over a paged KV cache without a scheduler).
"""

from __future__ import annotations

from minisgl_edu.models.registry import DEFAULT_MODEL, load_tokenizer, resolve_model

# The model classes import torch (seconds). The API server's main process only needs
# `resolve_model`, so the rest loads on first use; worker processes pay for it, not start-up.
_LAZY = {
    "ModelConfig": "minisgl_edu.models.config",
    "CausalLM": "minisgl_edu.models.decoder",
    "LlamaForCausalLM": "minisgl_edu.models.decoder",
    "Qwen2ForCausalLM": "minisgl_edu.models.decoder",
    "Qwen3ForCausalLM": "minisgl_edu.models.decoder",
    "create_model": "minisgl_edu.models.decoder",
    "load_model": "minisgl_edu.models.loader",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'minisgl_edu.models' has no attribute {name!r}")


__all__ = [
    "DEFAULT_MODEL",
    "CausalLM",
    "LlamaForCausalLM",
    "ModelConfig",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "create_model",
    "load_model",
    "load_tokenizer",
    "resolve_model",
]
