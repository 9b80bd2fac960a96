"""Shared fixtures: the converted default model, a tiny random-weight model beside it, and the
clients of a module's live server (`tests/live_server.py`: each module defines its `server`)."""

from __future__ import annotations

import os

import pytest

from minisgl_edu.process import set_worker_environment

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Before anything imports torch: the tests run the engine in this process beside the servers'
# workers, notebook kernels and the machine's other work, the sharing of cores the workers are set
# up for (GOMP_SPINCOUNT=1000: process.py says why). Without it torch's OpenMP threads spin while
# another process waits for the core: a mutant's grading that takes 9 s took 71-133 s with a
# second pytest running (load 2.4-2.7 on 2 cores).
set_worker_environment()


def pytest_addoption(parser):
    parser.addoption(
        "--reverse",
        action="store_true",
        help="run the collected tests in reverse order: state that one test leaves behind for a later one "
        "(a kernel compiled, a global set, a stream left current) then shows up as a failure",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--reverse"):
        items.reverse()


@pytest.fixture(scope="session")
def default_model_dir() -> str:
    """The default model (SmolLM2-135M-Instruct), converted from its GGUF once and cached."""
    from minisgl_edu.models import resolve_model

    return resolve_model("smollm2-135m")


def _save_random_model(hf_config, out) -> str:
    """Random weights (seeded: the same every run) for `hf_config`, saved as a checkpoint in `out`."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(hf_config).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="session")
def default_tokenizer_dir(request) -> str:
    """The default model's tokenizer files: the converted model, or, on a GPU machine that lacks its
    GGUF package, a folder holding only those files (MINISGL_EDU_TOKENIZER_DIR)."""
    return os.environ.get("MINISGL_EDU_TOKENIZER_DIR") or request.getfixturevalue("default_model_dir")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, default_tokenizer_dir) -> str:
    """A 2-layer Llama with random weights and the default model's tokenizer and chat template.

    It runs in milliseconds, so scheduler tests can drive many requests; its outputs are
    nonsense but deterministic, which is all the scheduling logic needs.
    """
    from transformers import AutoTokenizer

    from minisgl_edu.models.testing import tiny_hf_config

    out = tmp_path_factory.mktemp("tiny-llama")
    cfg = tiny_hf_config("llama", vocab_size=49152, max_position_embeddings=4096, tie_word_embeddings=True)
    _save_random_model(cfg, out)
    AutoTokenizer.from_pretrained(default_tokenizer_dir).save_pretrained(out)
    return str(out)


@pytest.fixture(scope="session")
def tiny_qwen3_dir(tmp_path_factory) -> str:
    """Random weights with Qwen3-0.6B's attention shape (16 query heads, 8 KV heads, head_dim 128):
    the shape the GPU kernels are tuned for."""
    from minisgl_edu.models.testing import tiny_hf_config

    cfg = tiny_hf_config(
        "qwen3",
        vocab_size=512,
        hidden_size=256,
        intermediate_size=512,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
    )
    return _save_random_model(cfg, tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture(scope="module")
def client(server):
    """httpx on the module's `server`, with its API key."""
    import httpx

    with httpx.Client(base_url=server.url, headers=server.auth, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def oai(server):
    """The official openai client on the module's `server`."""
    import openai

    return openai.OpenAI(base_url=server.url + "/v1", api_key=server.api_key, timeout=120, max_retries=0)
