"""The real default model (SmolLM2-135M-Instruct, converted from the bundled GGUF) vs transformers.

Slow: converts the GGUF on first use (~30 s, cached afterwards) and loads the model twice.
"""

from __future__ import annotations

import pytest
import torch

from minisgl_edu.models import load_model, load_tokenizer, resolve_model
from minisgl_edu.models.testing import PagedRunner

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def default_model():
    from transformers import AutoModelForCausalLM

    model_dir = resolve_model("smollm2-135m")
    ours, cfg = load_model(model_dir, dtype=torch.float32)
    hf = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    tokenizer = load_tokenizer(model_dir)
    return model_dir, ours, cfg, hf, tokenizer


def chat_ids(tokenizer) -> list[int]:
    messages = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if not isinstance(ids, list):  # transformers 5 may return a BatchEncoding
        ids = ids["input_ids"]
    return list(ids)


def test_config_of_default_model(default_model):
    _, _, cfg, _, tokenizer = default_model
    assert (cfg.arch, cfg.num_layers, cfg.hidden_size, cfg.num_heads, cfg.num_kv_heads) == ("llama", 30, 576, 9, 3)
    assert cfg.head_dim == 64 and cfg.vocab_size == 49152 and cfg.rope_theta == 100000.0
    assert cfg.tie_word_embeddings and cfg.eos_token_ids == [2] and cfg.bos_token_id == 1
    assert tokenizer.convert_ids_to_tokens(2) == "<|im_end|>"
    assert tokenizer.chat_template


def test_logits_match_transformers(default_model):
    _, ours, cfg, hf, tokenizer = default_model
    ids = chat_ids(tokenizer)
    assert ids[0] == 1 and len(ids) > 20  # <|im_start|>system ... <|im_start|>assistant\n
    with torch.no_grad():
        ref = hf(torch.tensor([ids])).logits[0].float()
    runner = PagedRunner(ours, cfg, page_size=16)
    row = runner.add_request()
    (logits,) = runner.step([(row, ids)], all_logits=True)
    assert (logits - ref).abs().max().item() < 1e-3
    assert torch.equal(logits.argmax(-1), ref.argmax(-1))


def test_greedy_answer(default_model):
    """Greedy decode through the paged cache gives transformers' greedy answer, and it is sensible."""
    _, ours, cfg, hf, tokenizer = default_model
    ids = chat_ids(tokenizer)
    with torch.no_grad():
        ref = hf.generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False)[0, len(ids) :].tolist()
    runner = PagedRunner(ours, cfg, page_size=16)
    row = runner.add_request()
    out, new = [], ids
    for _ in range(len(ref)):
        (logits,) = runner.step([(row, new)])
        new = [int(logits.argmax())]
        out.append(new[0])
    assert out == ref
    assert "Paris" in tokenizer.decode(out)
