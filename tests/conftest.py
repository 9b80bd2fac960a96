"""Shared fixtures: the converted default model, and a tiny random-weight model beside it."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def default_model_dir() -> str:
    """The default model (SmolLM2-135M-Instruct), converted from its GGUF once and cached."""
    from minisgl_edu.models import resolve_model

    return resolve_model("smollm2-135m")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, default_model_dir) -> str:
    """A 2-layer Llama with random weights and the default model's tokenizer and chat template.

    It runs in milliseconds, so scheduler tests can drive many requests; its outputs are
    nonsense but deterministic, which is all the scheduling logic needs.
    """
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = tmp_path_factory.mktemp("tiny-llama")
    cfg = LlamaConfig(
        vocab_size=49152,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        rope_theta=10000.0,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(default_model_dir).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="session")
def tiny_qwen3_dir(tmp_path_factory) -> str:
    """Random weights with Qwen3-0.6B's attention shape (16 query heads, 8 KV heads, head_dim 128):
    the shape the GPU kernels are tuned for."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out = tmp_path_factory.mktemp("tiny-qwen3")
    cfg = Qwen3Config(
        vocab_size=512,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        rope_theta=10000.0,
    )
    torch.manual_seed(0)
    Qwen3ForCausalLM(cfg).save_pretrained(out)
    return str(out)
