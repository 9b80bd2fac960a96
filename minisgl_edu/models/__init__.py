"""Models: Llama, Qwen2, Qwen3 as our own torch modules; config; weight loading.

Where this sits on the request path: the engine's forward pass. At start-up the server resolves
`--model` to a directory (`resolve_model`), the tokenizer workers load `load_tokenizer(dir)` and
the scheduler process loads `load_model(dir)`. For every batch the engine then calls

    hidden = model(input_ids, positions, attn_backend)   # flat [T] tokens of all requests
    logits = model.compute_logits(hidden[last_token_of_each_request])

Module map: `config` (ModelConfig), `rope` (rotary embedding), `layers` (RMSNorm, attention,
MLP, decoder layer), `decoder` (the model, `create_model`, `load_weights`), `loader`
(safetensors), `registry` (aliases, hub ids), `convert` (bundled GGUF -> HF directory),
`testing` (run a model over a paged KV cache without a scheduler).
"""

from __future__ import annotations

from minisgl_edu.models.config import ModelConfig
from minisgl_edu.models.decoder import (
    CausalLM,
    LlamaForCausalLM,
    Qwen2ForCausalLM,
    Qwen3ForCausalLM,
    create_model,
)
from minisgl_edu.models.loader import load_model
from minisgl_edu.models.registry import DEFAULT_MODEL, load_tokenizer, resolve_model

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
