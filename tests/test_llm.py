"""The offline API on the real default model: greedy tokens equal `transformers.generate`."""

from __future__ import annotations

import pytest
import torch

from minisgl_edu import LLM, SamplingParams

pytestmark = pytest.mark.slow

CHATS = [
    [{"role": "user", "content": "What is KV Cache?"}],
    [{"role": "user", "content": "Écris une phrase sur la mer."}],
    [{"role": "user", "content": "用一句话介绍北京。"}],
    [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "Name three colours."}],
    [{"role": "user", "content": "¿Cuál es la capital de España?"}],
]


@pytest.fixture(scope="module")
def llm(default_model_dir):
    return LLM(default_model_dir, device="cpu", page_size=16, max_total_tokens=4096)


def test_greedy_equals_transformers_generate(llm, default_model_dir):
    from transformers import AutoModelForCausalLM

    params = SamplingParams(max_tokens=24, temperature=0.0)
    outs = llm.generate(CHATS, params)  # all five batched together
    hf = AutoModelForCausalLM.from_pretrained(default_model_dir, dtype=torch.float32).eval()
    for chat, out in zip(CHATS, outs):
        ids = torch.tensor([out.prompt_token_ids])
        with torch.inference_mode():
            gen = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=24, do_sample=False)
        expected = gen[0, ids.shape[1] :].tolist()
        assert out.token_ids == expected, chat
        assert out.finish_reason == ("stop" if len(expected) < 24 else "length")
        assert out.text == llm.tokenizer.decode(expected, skip_special_tokens=True)


def test_prompt_forms_and_stop_string(llm):
    ids = llm.encode(CHATS[0])
    assert ids[-3:] == llm.tokenizer.encode("<|im_start|>assistant\n")[-3:]
    by_ids, by_chat = llm.generate([ids, CHATS[0]], SamplingParams(max_tokens=8))
    assert by_ids.token_ids == by_chat.token_ids
    text = by_chat.text
    stop = text.split()[2]
    out = llm.generate(CHATS[0], SamplingParams(max_tokens=8, stop=[stop]))[0]
    assert out.finish_reason == "stop" and stop not in out.text and text.startswith(out.text)


def test_seeded_sampling_is_reproducible(llm):
    sp = SamplingParams(max_tokens=16, temperature=0.9, top_p=0.95, seed=7)
    a = llm.generate(CHATS[:2], [sp, SamplingParams(max_tokens=16)])[0]
    b = llm.generate(CHATS[0], sp)[0]
    assert a.token_ids == b.token_ids
