"""Hostile input and security: every bad request gets a 4xx OpenAI-style JSON error and the
server keeps serving; the API key guards every /v1 route; prompts and keys stay out of the logs.

One server for the module (tiny random-weight model: the real tokenizer, fast), with the API key
given in the environment (`MINISGL_API_KEY`, so it is not in `ps`) and a small body limit
(`--max-request-bytes 262144`) so that a 413 costs little to provoke. The module ends with a
bounded schemathesis run over the OpenAPI schema (positive and negative cases), then stops the
server and reads everything it wrote.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import types

import httpx
import pytest
from live_server import pid_alive, running

pytestmark = pytest.mark.slow

API_KEY = "sk-test-0123456789abcdef-KEY"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
SECRET_PROMPT = "my bank password is Tr0ub4dor-SECRET-PROMPT-42"
MAX_BYTES = 256 * 1024
CONTEXT = 4096  # the tiny model's context (its KV cache, 512 pages x 16 tokens, holds more)


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_model_dir):
    tmp = tmp_path_factory.mktemp("input")
    args = ("--model", tiny_model_dir, "--num-pages", "512", "--max-request-bytes", str(MAX_BYTES))
    with running(tmp, *args, api_key=API_KEY, key_in_env=True) as srv:
        yield srv


def assert_openai_error(r: httpx.Response, status: int | None = None) -> dict:
    if status is None:
        assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    else:
        assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json")
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert isinstance(err["message"], str) and err["message"] and isinstance(err["type"], str)
    return err


def assert_still_serving(client) -> None:
    r = client.post("/v1/completions", json={"prompt": "Hello", "max_tokens": 2, "temperature": 0})
    assert r.status_code == 200, r.text
    assert r.json()["usage"]["completion_tokens"] == 2


def chat(content="hi", **kw) -> dict:
    return {"messages": [{"role": "user", "content": content}], "max_tokens": 2, **kw}


def comp(prompt="hi", **kw) -> dict:
    return {"prompt": prompt, "max_tokens": 2, **kw}


C, T = "/v1/chat/completions", "/v1/completions"

# name: (path, JSON body or raw bytes, expected status, a word the message or param must contain)
HOSTILE: dict[str, tuple] = {
    # types
    "max_tokens float": (T, comp(max_tokens=1.5), 400, "max_tokens"),
    "max_tokens bool": (T, comp(max_tokens=True), 400, "max_tokens"),
    "max_tokens huge": (T, comp(max_tokens=2**40), 400, "max_tokens"),
    "max_tokens beyond int64": (T, comp(max_tokens=10**30), 400, "max_tokens"),
    "temperature string": (C, chat(temperature="0.5"), 400, "temperature"),
    "temperature NaN": (T, b'{"prompt": "hi", "max_tokens": 2, "temperature": NaN}', 400, "temperature"),
    "temperature Infinity": (T, b'{"prompt": "hi", "max_tokens": 2, "temperature": Infinity}', 400, "temperature"),
    "temperature huge": (T, comp(temperature=1e300), 400, "temperature"),
    "top_p negative": (T, comp(top_p=-0.1), 400, "top_p"),
    "top_k beyond int64": (T, comp(top_k=10**30), 400, "top_k"),
    "top_k below -1": (T, comp(top_k=-2), 400, "top_k"),
    "seed beyond int64": (T, comp(seed=2**64), 400, "seed"),
    "seed float": (T, comp(seed=1.5), 400, "seed"),
    "n huge": (T, comp(n=10**30), 400, "n"),
    "n zero": (T, comp(n=0), 400, "n must be at least 1"),
    "n above the running-request limit": (T, comp(n=100_000), 400, "n must be at most"),
    "best_of": (T, comp(best_of=4), 400, "best_of"),
    "top_logprobs 21": (C, chat(logprobs=True, top_logprobs=21), 400, "top_logprobs"),
    "top_logprobs without logprobs": (C, chat(top_logprobs=2), 400, "top_logprobs"),
    "completions logprobs 21": (T, comp(logprobs=21), 400, "logprobs"),
    "invalid JSON schema": (
        C,
        chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nonsense"}}}),
        400,
        "invalid json_schema",
    ),
    "json_schema without a schema": (C, chat(response_format={"type": "json_schema"}), 400, "schema"),
    "unknown response_format type": (C, chat(response_format={"type": "yaml"}), 400, "response_format"),
    "invalid regex": (T, comp(regex="(unclosed"), 400, "invalid regex"),
    "two grammars": (T, comp(regex="a", ebnf='root ::= "a"'), 400, "at most one"),
    "tools": (C, chat(tools=[{"type": "function", "function": {"name": "f"}}]), 400, "tools"),
    "tool_choice": (C, chat(tool_choice="auto"), 400, "tool_choice"),
    "modalities": (C, chat(modalities=["text", "audio"]), 400, "modalities"),
    "echo": (T, comp(echo=True), 400, "echo"),
    "logit_bias key not a token id": (T, comp(logit_bias={"hello": 5}), 400, "logit_bias"),
    "logit_bias token outside the vocabulary": (T, comp(logit_bias={"99999999": 5}), 400, "logit_bias"),
    "logit_bias value above 100": (T, comp(logit_bias={"5": 101}), 400, "logit_bias"),
    "presence_penalty above 2": (T, comp(presence_penalty=2.5), 400, "presence_penalty"),
    "repetition_penalty zero": (T, comp(repetition_penalty=0), 400, "repetition_penalty"),
    "ignore_eos string": (T, comp(ignore_eos="yes"), 400, "ignore_eos"),
    "stream_options not an object": (T, comp(stream=True, stream_options=5), 400, "stream_options"),
    "model not a string": (T, comp(model=["x"]), 400, "model"),
    "model name too long": (T, comp(model="m" * 1000), 400, "model"),
    "messages not a list": (C, {"messages": "hi", "max_tokens": 2}, 400, "messages"),
    "message without role": (C, {"messages": [{"content": "hi"}], "max_tokens": 2}, 400, "role"),
    "message not an object": (C, {"messages": ["hi"], "max_tokens": 2}, 400, "messages"),
    "image content part": (
        C,
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}], "max_tokens": 2},
        400,
        "messages",
    ),
    "too many messages": (C, {"messages": [{"role": "user"}] * 5000, "max_tokens": 2}, 400, "messages"),
    "prompt a number": (T, comp(prompt=5), 400, "prompt"),
    "prompt an object": (T, comp(prompt={"a": 1}), 400, "prompt"),
    "prompt mixed list": (T, comp(prompt=[1, "a"]), 400, "prompt"),
    "two prompts": (T, comp(prompt=["a", "b"]), 400, "prompt"),
    "empty token list": (T, comp(prompt=[]), 400, "prompt"),
    # text that cannot travel
    "NUL in prompt": (T, comp(prompt="abc\u0000def"), 400, "NUL"),
    "NUL in chat content": (C, chat("abc\u0000"), 400, "NUL"),
    "NUL in content part": (
        C,
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "a\u0000"}]}], "max_tokens": 2},
        400,
        "NUL",
    ),
    "NUL in stop": (T, comp(stop=["a\u0000"]), 400, "NUL"),
    "lone surrogate in prompt": (T, b'{"prompt": "abc\\ud800def", "max_tokens": 2}', 400, "surrogate"),
    "lone low surrogate in chat": (
        C,
        b'{"messages": [{"role": "user", "content": "\\udfff"}], "max_tokens": 2}',
        400,
        "surrogate",
    ),
    "lone surrogate in stop": (T, b'{"prompt": "hi", "stop": "\\ud83d", "max_tokens": 2}', 400, "surrogate"),
    "invalid UTF-8 bytes": (T, b'{"prompt": "caf\xe9 \xff\xfe", "max_tokens": 2}', 400, "UTF-8"),
    "overlong UTF-8 encoding": (T, b'{"prompt": "\xc0\xaf", "max_tokens": 2}', 400, "UTF-8"),
    # token ids
    "token id = vocab size": (T, comp(prompt=[1, 2, 49152]), 400, "vocabulary"),
    "negative token id": (T, comp(prompt=[5, -1]), 400, "vocabulary"),
    "token id beyond int32": (T, comp(prompt=[5, 2**31]), 400, "vocabulary"),
    "token id beyond int64": (T, comp(prompt=[[5, 10**30]]), 400, "vocabulary"),
    # sizes
    "too many stop strings": (T, comp(stop=[f"s{i}" for i in range(17)]), 400, "stop"),
    "stop string too long": (T, comp(stop="x" * 300), 400, "stop"),
    "prompt beyond the context": (T, comp(prompt="hello " * (CONTEXT + 100)), 400, "context"),
    "token prompt beyond the context": (T, comp(prompt=[100] * (CONTEXT + 1)), 400, "context"),
    "chat beyond the context": (C, chat("hello " * (CONTEXT + 100)), 400, "context"),
    "body too large": (T, comp(prompt="a" * (MAX_BYTES + 1)), 413, "larger"),
    # JSON itself
    "deeply nested arrays": (T, b"[" * 100_000 + b"]" * 100_000, 400, "deeper"),
    "deeply nested objects": (T, b'{"a":' * 5000 + b"1" + b"}" * 5000, 400, "deeper"),
    "nesting inside a field": (T, b'{"prompt": ' + b"[" * 40 + b"1" + b"]" * 40 + b"}", 400, "deeper"),
    "malformed JSON": (T, b'{"prompt": "hi", ', 400, "JSON"),
    "empty body": (T, b"", 400, "JSON"),
    "JSON but not an object": (T, b'"just a string"', 400, "JSON"),
}

# Fields a client sends that this engine would otherwise have ignored or misread: each is a 400 whose
# `param` names the field (OpenAI's shape), whichever process finds the fault: the API server (the
# request model), the tokenizer (the prompt) or the scheduler (the vocabulary, the grammar).
# name: (path, body, param, code, a word the message must contain)
SCHEMA_ALLOF = {"allOf": [{"type": "string"}, {"type": "integer"}]}


def schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


FIELD_ERRORS: dict[str, tuple] = {
    "logit_bias superscript key": (T, comp(logit_bias={"\u00b2": 1}), "logit_bias", "invalid_value", "token id"),
    "logit_bias full-width key": (T, comp(logit_bias={"\uff11\uff12": 1}), "logit_bias", "invalid_value", "token id"),
    "logit_bias NaN": (T, b'{"prompt": "hi", "max_tokens": 2, "logit_bias": {"5": NaN}}', "logit_bias.5", "invalid_value", "finite"),
    "logit_bias token outside the vocabulary": (T, comp(logit_bias={"99999999": 5}), "logit_bias", "invalid_value", "vocabulary"),
    "repetition_penalty 1e-300": (T, comp(repetition_penalty=1e-300), "repetition_penalty", "invalid_value", "0.01"),
    "repetition_penalty above 2": (T, comp(repetition_penalty=2.5), "repetition_penalty", "invalid_value", "2"),
    "unknown field": (T, comp(frobnicate=1), "frobnicate", "unknown_parameter", "unknown field"),
    "vLLM field not read": (C, chat(guided_decoding_backend="outlines"), "guided_decoding_backend", "unknown_parameter", "unknown"),
    "OpenAI field that changes the answer": (C, chat(verbosity="low"), "verbosity", "unknown_parameter", "unknown"),
    "unknown field in a message": (C, {"messages": [{"role": "user", "content": "x", "name": "bob"}], "max_tokens": 2}, "messages.0.name", "unknown_parameter", "unknown"),
    "include_stop_str_in_output": (T, comp(include_stop_str_in_output=True), "include_stop_str_in_output", "unsupported_parameter", "stop string"),
    "top_logprobs on completions": (T, comp(top_logprobs=2), "top_logprobs", "unsupported_parameter", "logprobs: N"),
    "guided_choice empty": (T, comp(guided_choice=[]), "guided_choice", "invalid_value", "at least 1"),
    "guided_regex invalid": (T, comp(guided_regex="(a"), "guided_regex", "invalid_value", "parenthesis is not closed"),
    "guided_grammar invalid": (T, comp(guided_grammar="root ::= foo"), "guided_grammar", "invalid_value", '"foo" is not defined'),
    "regex invalid bounds": (T, comp(regex="a{3,1}"), "regex", "invalid_value", "Lower bound is larger"),
    "two grammar fields": (T, comp(regex="a", guided_json={}), "guided_json", "invalid_value", "at most one"),
    "schema with allOf": (C, chat(response_format=schema_format(SCHEMA_ALLOF)), "response_format", "invalid_value", "allOf"),
    "schema requiring an undefined property": (T, comp(guided_json={"type": "object", "required": ["a"], "additionalProperties": False}), "guided_json", "invalid_value", "required"),
    "schema with a remote $ref": (T, comp(json_schema='{"$ref": "https://example.com/s.json"}'), "json_schema", "invalid_value", "$ref"),
    "schema with not": (T, comp(guided_json={"not": {"type": "string"}}), "guided_json", "invalid_value", "not"),
    "schema of an unknown type": (C, chat(response_format=schema_format({"type": "nonsense"})), "response_format", "invalid_value", "Unsupported type"),
    "token id = vocab size": (T, comp(prompt=[1, 2, 49152]), "prompt", "invalid_prompt", "vocabulary"),
    "prompt beyond the context": (T, comp(prompt="hello " * (CONTEXT + 100)), "prompt", "context_length_exceeded", "context"),
    "chat beyond the context": (C, chat("hello " * (CONTEXT + 100)), "messages", "context_length_exceeded", "context"),
    "max_tokens zero": (T, comp(max_tokens=0), "max_tokens", "invalid_value", "max_tokens"),
}  # fmt: skip


@pytest.mark.timeout(60, func_only=True)
@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_input_gets_a_4xx_json_error(client, case):
    path, body, status, needle = HOSTILE[case]
    for stream in (False, True):
        if isinstance(body, dict):
            r = client.post(path, json={**body, "stream": body.get("stream", stream)})
        else:
            r = client.post(path, content=body, headers={"Content-Type": "application/json"})
        err = assert_openai_error(r, status)
        assert needle in err["message"] or needle in (err["param"] or ""), err
        if not isinstance(body, dict):
            break


@pytest.mark.timeout(60, func_only=True)
@pytest.mark.parametrize("case", list(FIELD_ERRORS))
def test_every_field_error_names_its_field(client, case):
    path, body, param, code, needle = FIELD_ERRORS[case]
    for stream in (False, True):
        if isinstance(body, dict):
            r = client.post(path, json={**body, "stream": stream})
        else:
            r = client.post(path, content=body, headers={"Content-Type": "application/json"})
        err = assert_openai_error(r, 400)
        assert (err["param"], err["code"]) == (param, code), err
        assert needle in err["message"], err
        # the grammar engine's messages without its internals (C++ source paths, times)
        assert ".cc:" not in err["message"] and "/project/" not in err["message"], err
        if not isinstance(body, dict):
            break


@pytest.mark.timeout(60, func_only=True)
def test_body_limit_also_holds_without_content_length(client):
    """A chunked body has no Content-Length to check first: the limit counts what arrives."""

    def chunks():
        yield b'{"prompt": "'
        for _ in range(MAX_BYTES // 1024 + 1):
            yield b"a" * 1024
        yield b'", "max_tokens": 2}'

    r = client.post(T, content=chunks(), headers={"Content-Type": "application/json"})
    assert "content-length" not in r.request.headers
    assert assert_openai_error(r, 413)["code"] == "request_too_large"


@pytest.mark.timeout(60, func_only=True)
def test_wrong_method_and_unknown_route_are_json_errors(client):
    assert_openai_error(client.get(T), 405)
    assert_openai_error(client.get("/v1/no-such-route"), 404)
    r = client.post(T, content=b"prompt=hi", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert_openai_error(r, 400)


@pytest.mark.timeout(60, func_only=True)
def test_tiny_temperature_is_greedy_not_nan(client):
    # 1/1e-300 overflows float32: such a temperature is treated as greedy (0), not sent to the sampler.
    a = client.post(T, json=comp("Once upon", max_tokens=4, temperature=1e-300))
    b = client.post(T, json=comp("Once upon", max_tokens=4, temperature=0))
    assert a.status_code == b.status_code == 200, a.text
    assert a.json()["choices"][0]["text"] == b.json()["choices"][0]["text"]


@pytest.mark.timeout(60, func_only=True)
def test_tiny_top_p_keeps_the_top_token(client):
    # 5e-324 is 0 in float32: the sampler would drop every token (found by the schemathesis run).
    a = client.post(T, json=comp("Once upon", max_tokens=4, top_p=5e-324, ignore_eos=True))
    b = client.post(T, json=comp("Once upon", max_tokens=4, temperature=0, ignore_eos=True))
    assert a.status_code == b.status_code == 200, a.text
    assert a.json()["choices"][0]["text"] == b.json()["choices"][0]["text"]
    assert_still_serving(client)


@pytest.mark.timeout(60, func_only=True)
def test_edge_values_that_are_valid_are_served(client):
    """The limits are not too tight: extreme but legal values run."""
    for body in (
        comp(seed=-(2**63)),
        comp(seed=2**63 - 1),
        comp(top_k=2**31 - 1),
        comp(temperature=100.0),
        comp(top_p=1e-9),
        comp(stop=[f"stop{i}" for i in range(16)]),
        comp(prompt=[0, 49151]),
        chat("\u00e9\u4e2d\U0001f600 emoji and accents"),
        chat([{"type": "text", "text": "parts"}]),
        {"messages": [{"role": "system", "content": None}, {"role": "user", "content": "x"}], "max_tokens": 2},
    ):
        path = C if "messages" in body else T
        r = client.post(path, json=body)
        assert r.status_code == 200, (body, r.text[:300])
    assert_still_serving(client)


# ---------------------------------------------------------------- security


V1_ROUTES = [("GET", "/v1/models"), ("POST", C), ("POST", T), ("GET", "/v1/unknown"), ("GET", C)]


@pytest.mark.timeout(60, func_only=True)
@pytest.mark.parametrize(
    "given",
    [
        None,
        "Bearer wrong",
        f"Bearer {API_KEY}x",
        f"Bearer {API_KEY[:-1]}",
        f"bearer {API_KEY}",
        API_KEY,
        f"Bearer  {API_KEY}",
        "Basic Zm9vOmJhcg==",
    ],
)
def test_every_v1_route_needs_the_exact_key(server, given):
    headers = {"Authorization": given} if given else {}
    for method, path in V1_ROUTES:
        r = httpx.request(method, server.url + path, headers=headers, json=comp() if method == "POST" else None)
        assert assert_openai_error(r, 401)["code"] == "invalid_api_key", (method, path)
    for path in ("/health", "/metrics", "/"):
        assert httpx.get(server.url + path).status_code == 200


def test_api_key_is_compared_in_constant_time(monkeypatch):
    """Every guarded route goes through hmac.compare_digest, on fixed-length digests (so neither
    the key's content nor its length shows in the time an answer takes)."""
    import hmac

    from fastapi.testclient import TestClient

    from minisgl_edu.server import api_server, limits

    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(limits.hmac, "compare_digest", spy)
    # a stand-in for the server's state: no route is reached, the key is refused before any
    app = api_server.create_app(types.SimpleNamespace(stages=None), "m", api_key="k3y")
    c = TestClient(app)
    for method, path in V1_ROUTES:
        for key in ("", "Bearer x", "Bearer " + "y" * 500):
            calls.clear()
            assert c.request(method, path, headers={"Authorization": key}).status_code == 401
            assert calls == [(32, 32)], (method, path, calls)


def test_server_listens_on_loopback_by_default():
    from minisgl_edu.server.args import parse_args

    assert parse_args([]).host == "127.0.0.1"


@pytest.mark.timeout(30, func_only=True)
def test_server_is_not_reachable_from_other_addresses(server):
    try:  # this machine's address on its default route (no packet is sent)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            addr = s.getsockname()[0]
    except OSError:
        pytest.skip("no network interface besides loopback")
    if addr.startswith("127."):
        pytest.skip("no network interface besides loopback")
    with pytest.raises(OSError):
        socket.create_connection((addr, server.port), timeout=2).close()


@pytest.mark.timeout(30, func_only=True)
def test_api_key_is_not_on_the_command_line(server):
    ps = subprocess.run(["ps", "auxww"], capture_output=True, text=True).stdout
    assert API_KEY not in ps


# ---------------------------------------------------------------- fuzzing from the OpenAPI schema


FUZZ_EXAMPLES = {"positive": 50, "negative": 40}
GUIDED = ("guided_json", "guided_regex", "guided_choice", "guided_grammar")


def _fuzz_schema(server) -> dict:
    """The server's own OpenAPI schema, with generation kept short: max_tokens at most 4."""
    schema = httpx.get(server.url + "/openapi.json").json()
    for name in ("ChatCompletionRequest", "CompletionRequest"):
        props = schema["components"]["schemas"][name]["properties"]
        for field in ("max_tokens", "max_completion_tokens"):
            props[field] = {"type": "integer", "minimum": 1, "maximum": 4}
        props["n"] = {"type": "integer", "minimum": 1, "maximum": 2}
        # Grammars are compiled in the scheduler's loop: random regexes and schemas are bounded by
        # the cases above, not fuzzed (a pathological one could take the compiler seconds).
        for field in ("regex", "ebnf", "response_format", "json_schema") + GUIDED:
            props.pop(field, None)
        schema["components"]["schemas"][name].setdefault("required", []).append("max_tokens")
    return schema


def _check_fuzz_response(case, r) -> None:
    where = f"{case.method} {case.path} body={json.dumps(case.body, default=repr)[:300]}"
    assert r.status_code < 500, f"{r.status_code} for {where}: {r.text[:300]}"
    if r.status_code >= 400:
        err = r.json()["error"]
        assert isinstance(err["message"], str) and err["type"], where
        return
    if case.path in (C, T):
        ctype = r.headers.get("content-type") or r.headers.get("Content-Type") or [""]
        if (ctype[0] if isinstance(ctype, list) else ctype).startswith("text/event-stream"):
            assert r.text.endswith("data: [DONE]\n\n") or '"error"' in r.text.rsplit("data: ", 1)[-1], where
            for event in r.text.strip().split("\n\n")[:-1]:
                assert "choices" in json.loads(event[len("data: ") :]), where
        else:
            body = r.json()
            assert body["object"] in ("chat.completion", "text_completion"), where
            # At most max_tokens per answer (a negative case may send a max_tokens above the
            # schema's 4 that the server rightly accepts), n answers. max_completion_tokens,
            # OpenAI's newer name, wins when both are given.
            asked = case.body.get("max_completion_tokens") or case.body.get("max_tokens") or 4
            n = case.body.get("n") or 1
            assert body["usage"]["completion_tokens"] <= asked * n, where


@pytest.mark.timeout(600, func_only=True)
@pytest.mark.parametrize("mode", list(FUZZ_EXAMPLES))
def test_fuzz_the_api_from_its_openapi_schema(server, client, mode):
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings

    schema = schemathesis.openapi.from_dict(_fuzz_schema(server))
    strategy = schema.as_strategy(generation_mode=schemathesis.GenerationMode(mode))
    seen = []

    @given(case=strategy)
    # derandomize: the same cases on every run, so CI is repeatable; wider random exploration is a
    # manual job (see docs/reliability.md).
    @settings(
        max_examples=FUZZ_EXAMPLES[mode],
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def run(case):
        if isinstance(case.body, dict) and "max_tokens" not in case.body and "max_completion_tokens" not in case.body:
            case.body["max_tokens"] = 4  # (a negative case may drop it; the default, 128, is slow)
        r = case.call(base_url=server.url, headers=AUTH, timeout=60)
        seen.append(r.status_code)
        _check_fuzz_response(case, r)

    t0 = time.monotonic()
    run()
    print(
        f"{mode}: {len(seen)} cases in {time.monotonic() - t0:.1f} s, status codes "
        f"{ {s: seen.count(s) for s in sorted(set(seen))} }"
    )
    assert_still_serving(client)


# ---------------------------------------------------------------- logs (ends the module's server)


@pytest.mark.timeout(60, func_only=True)
def test_logs_hold_no_prompts_or_keys(server, client):
    r = client.post(C, json=chat(SECRET_PROMPT, max_tokens=3))
    assert r.status_code == 200
    client.post(T, json=comp(SECRET_PROMPT + "\u0000"))  # rejected, with the prompt in the body
    client.post(T, json=comp(SECRET_PROMPT, max_tokens=0))
    client.post(T, json=comp(SECRET_PROMPT * 2000))  # beyond the context: the tokenizer rejects it
    httpx.post(server.url + T, json=comp(SECRET_PROMPT), headers={"Authorization": "Bearer " + API_KEY + "-x"})
    workers = dict(server.workers)
    server.proc.terminate()
    assert server.proc.wait(30) == 0
    out = server.output()
    assert "ready in" in out
    for secret in (SECRET_PROMPT, "Tr0ub4dor", API_KEY):
        assert secret not in out, out
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in workers)
