"""End to end: the requests an SGLang or OpenAI user sends beyond the plain one, against the real
server (`python -m minisgl_edu.serve`, the real default model, float32 weights so the logprobs can
be checked against `transformers`), through the official `openai` client and raw SSE.

logprobs (chat and completions shapes, stream and not), n answers (choices by index, the prompt
counted once), JSON under a schema (every answer of a fixed prompt set parses and validates),
penalties changing the answer, and every page back after streams with n > 1 and a grammar are cut.
"""

from __future__ import annotations

import json

import httpx
import jsonschema
import pytest
from live_server import API_KEY, AUTH, parse_sse, running, wait_idle

pytestmark = pytest.mark.slow

MODEL = "smollm2-135m"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(tmp_path_factory.mktemp("server"), "--cpu-weights", "float32", api_key=API_KEY) as srv:
        yield srv


def messages(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# ---------------------------------------------------------------- logprobs


@pytest.fixture(scope="module")
def hf(default_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(default_model_dir, torch_dtype="float32").eval()
    return model, AutoTokenizer.from_pretrained(default_model_dir)


@pytest.mark.timeout(180, func_only=True)
def test_chat_logprobs_equal_transformers_log_softmax(oai, hf):
    import torch

    model, tok = hf
    question = messages("What is KV Cache?")
    r = oai.chat.completions.create(
        model=MODEL, messages=question, max_tokens=10, temperature=0, logprobs=True, top_logprobs=3
    )
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens == 10
    assert b"".join(bytes(e.bytes) for e in content).decode() == r.choices[0].message.content
    # transformers, greedy from the same prompt: the same tokens, the same log-probabilities
    ids = tok.apply_chat_template(question, add_generation_prompt=True, return_dict=False)
    with torch.no_grad():
        for e in content:
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1)
            top = torch.topk(logp, 3)
            best = int(top.indices[0])
            assert bytes(e.bytes) == tok.convert_tokens_to_string([tok.convert_ids_to_tokens(best)]).encode() or (
                e.token == tok.decode([best])
            )
            assert e.logprob == pytest.approx(float(logp[best]), abs=2e-4)
            assert [t.logprob for t in e.top_logprobs] == pytest.approx(top.values.tolist(), abs=2e-4)
            assert e.top_logprobs[0].token == e.token  # greedy: the chosen token is the likeliest
            ids.append(best)
    # streamed: the same entries, spread over the chunks
    stream = oai.chat.completions.create(
        model=MODEL, messages=question, max_tokens=10, temperature=0, logprobs=True, top_logprobs=3, stream=True
    )
    streamed = [e for c in stream if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert [e.token for e in streamed] == [e.token for e in content]
    # the prompt is a prefix-cache hit this time: the same numbers up to float32 summation order
    assert [e.logprob for e in streamed] == pytest.approx([e.logprob for e in content], abs=1e-4)


@pytest.mark.timeout(120, func_only=True)
def test_completions_logprobs_stream_and_not(client):
    body = {"model": MODEL, "prompt": "The capital of France is", "max_tokens": 6, "temperature": 0, "logprobs": 2}
    full = client.post("/v1/completions", json=body).json()
    lp = full["choices"][0]["logprobs"]
    assert "".join(lp["tokens"]) == full["choices"][0]["text"]
    assert len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"]) == 6
    assert lp["text_offset"] == [sum(len(t) for t in lp["tokens"][:i]) for i in range(6)]
    assert all(len(top) <= 2 and lp["tokens"][i] in top for i, top in enumerate(lp["top_logprobs"]))
    with client.stream("POST", "/v1/completions", json={**body, "stream": True}) as r:
        raw = "".join(r.iter_text())
    chunks = [json.loads(p) for p in parse_sse(raw)[:-1]]
    parts = [c["choices"][0]["logprobs"] for c in chunks if c["choices"][0]["logprobs"]]
    assert sum((p["tokens"] for p in parts), []) == lp["tokens"]
    assert sum((p["token_logprobs"] for p in parts), []) == lp["token_logprobs"]
    assert sum((p["text_offset"] for p in parts), []) == lp["text_offset"]
    # without logprobs, the field is null
    plain = client.post("/v1/completions", json={**body, "logprobs": None}).json()
    assert plain["choices"][0]["logprobs"] is None


# ---------------------------------------------------------------- n answers


@pytest.mark.timeout(180, func_only=True)
def test_n_choices_share_one_prompt(oai, client):
    one = oai.chat.completions.create(model=MODEL, messages=messages("Name a fruit."), max_tokens=8, temperature=0)
    r = oai.chat.completions.create(model=MODEL, messages=messages("Name a fruit."), max_tokens=8, temperature=0, n=3)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert {c.message.content for c in r.choices} == {one.choices[0].message.content}  # greedy
    assert r.usage.prompt_tokens == one.usage.prompt_tokens  # the prompt once
    assert r.usage.completion_tokens == 3 * one.usage.completion_tokens
    # streamed: each choice has its role chunk, its text and its finish chunk, told apart by index
    body = {"model": MODEL, "messages": messages("Name a fruit."), "max_tokens": 8, "temperature": 0, "n": 2}
    with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as s:
        payloads = parse_sse("".join(s.iter_text()))
    assert payloads[-1] == "[DONE]"
    text = {0: "", 1: ""}
    finished = {}
    for p in payloads[:-1]:
        (choice,) = json.loads(p)["choices"]
        text[choice["index"]] += choice["delta"].get("content") or ""
        if choice["finish_reason"]:
            finished[choice["index"]] = choice["finish_reason"]
    assert text == {0: one.choices[0].message.content, 1: one.choices[0].message.content}
    assert set(finished) == {0, 1}
    # sampled answers differ from each other, and seeded ones are reproducible
    kw = dict(model=MODEL, messages=messages("Write a word."), max_tokens=8, temperature=1.0, n=4, seed=7)
    a, b = oai.chat.completions.create(**kw), oai.chat.completions.create(**kw)
    assert [c.message.content for c in a.choices] == [c.message.content for c in b.choices]
    assert len({c.message.content for c in a.choices}) > 1  # each answer its own seed (seed + index)


# ---------------------------------------------------------------- structured output

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "city": {"type": "string", "maxLength": 40},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
PROMPTS = [
    "Give a JSON object with a person's name, age and city.",
    "Describe a fictional teacher as JSON.",
    "Who are you? Answer in JSON.",
    "Invent a character for a story.",
    "What is KV Cache?",
]


@pytest.mark.timeout(300, func_only=True)
def test_json_schema_answers_parse_and_validate(oai):
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA, "strict": True}}
    for prompt in PROMPTS:
        r = oai.chat.completions.create(
            model=MODEL, messages=messages(prompt), max_tokens=100, temperature=0, response_format=fmt
        )
        choice = r.choices[0]
        assert choice.finish_reason == "stop", (prompt, choice.message.content)
        jsonschema.validate(json.loads(choice.message.content), SCHEMA)
    # JSON mode: any object; streamed, the pieces join to one
    stream = oai.chat.completions.create(
        model=MODEL,
        messages=messages(PROMPTS[0]),
        max_tokens=100,
        temperature=0,
        response_format={"type": "json_object"},
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert isinstance(json.loads(text), dict)


@pytest.mark.timeout(120, func_only=True)
def test_regex_and_penalties(client):
    body = {"model": MODEL, "messages": messages("Is the sky blue?"), "max_tokens": 10, "temperature": 0}
    r = client.post("/v1/chat/completions", json={**body, "regex": "(Yes|No)\\."}).json()
    assert r["choices"][0]["message"]["content"] in ("Yes.", "No.")
    repeat = {**body, "messages": messages("Repeat the word cat ten times."), "max_tokens": 24}
    plain = client.post("/v1/chat/completions", json=repeat).json()["choices"][0]["message"]["content"]
    penalised = client.post(
        "/v1/chat/completions", json={**repeat, "frequency_penalty": 2.0, "presence_penalty": 1.0}
    ).json()["choices"][0]["message"]["content"]
    assert penalised != plain
    biased = client.post("/v1/chat/completions", json={**repeat, "logit_bias": {"2": -100}}).json()
    assert biased["choices"][0]["message"]["content"]


@pytest.mark.timeout(180, func_only=True)
def test_vllm_and_sglang_structured_output_fields(oai, client):
    ask = dict(model=MODEL, messages=messages("Is the sky blue? Answer yes or no."), max_tokens=12, temperature=0)
    # vLLM's fields, sent as vLLM's documentation sends them: in the openai client's extra_body
    r = oai.chat.completions.create(**ask, extra_body={"guided_choice": ["yes", "no"]})
    assert (r.choices[0].message.content, r.choices[0].finish_reason) in (("yes", "stop"), ("no", "stop"))
    r = oai.chat.completions.create(**ask, extra_body={"guided_regex": "(Yes|No)\\."})
    assert r.choices[0].message.content in ("Yes.", "No.")
    small = {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 8}, "sure": {"type": "boolean"}},
        "required": ["answer", "sure"],
        "additionalProperties": False,
    }
    r = oai.chat.completions.create(**{**ask, "max_tokens": 40}, extra_body={"guided_json": small})
    assert r.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(r.choices[0].message.content), small)
    c = oai.completions.create(
        model=MODEL, prompt="The sky is", max_tokens=4, temperature=0, extra_body={"guided_choice": [" blue", " red"]}
    )
    assert c.choices[0].text in (" blue", " red")
    # SGLang's top-level json_schema: the schema as text, in the body as SGLang's clients post it
    body = {**ask, "max_tokens": 40, "json_schema": json.dumps(small)}
    r = client.post("/v1/chat/completions", json=body).json()
    assert r["choices"][0]["finish_reason"] == "stop"
    jsonschema.validate(json.loads(r["choices"][0]["message"]["content"]), small)


# ---------------------------------------------------------------- abort


@pytest.mark.timeout(120, func_only=True)
def test_cut_streams_with_n_and_a_grammar_free_every_page(server):
    start = wait_idle(server)
    bodies = [
        {"messages": messages("Write a long story."), "n": 3, "ignore_eos": True},
        {"messages": messages("A long list as JSON."), "response_format": {"type": "json_object"}, "n": 2},
    ]
    for extra in bodies:
        body = {"model": MODEL, "max_tokens": 1000, "temperature": 0, "stream": True, **extra}
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as c:
            with c.stream("POST", "/v1/chat/completions", json=body) as r:
                assert r.status_code == 200
                lines = r.iter_lines()
                got = [next(lines) for _ in range(12)]
                assert any('"content"' in x for x in got)
        wait_idle(server, start["minisgl_kv_pages_free"])
