"""End to end: the real server (`python -m minisgl_edu.serve`, real default model) in a subprocess.

One server is started for the module (small KV cache, 2 tokenizer workers, an API key) and
talked to with httpx and the official `openai` client. The last tests start their own servers:
one whose scheduler gets killed, one in `--shell` mode. Everything runs on CPU and is bounded in
time; the whole file takes about a minute on 2 cores.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import threading
import time

import httpx
import pytest
from live_server import (
    API_KEY,
    AUTH,
    NUM_PAGES,
    PAGE_SIZE,
    ServerProcess,
    assert_gone,
    chat_body,
    metrics,
    parse_sse,
    paused,
    running,
    wait_idle,
    wait_metrics,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(tmp_path_factory.mktemp("server"), "--num-tokenizer", "2", api_key=API_KEY) as srv:
        yield srv


# ---------------------------------------------------------------- processes and start-up


@pytest.mark.timeout(30, func_only=True)
def test_processes_are_named_and_startup_is_bounded(server):
    # (The other child is multiprocessing's resource tracker, which exits with the main process.)
    names = sorted(n for n in server.workers.values() if n.startswith("minisgl"))
    assert names == ["minisgl-TP0-scheduler", "minisgl-detokenizer-0", "minisgl-tokenizer-0", "minisgl-tokenizer-1"]
    ps = subprocess.run(["ps", "auxww"], capture_output=True, text=True).stdout
    for name in names:
        assert name in ps
    # Start-up takes ~8 s with one tokenizer on an idle 2-core machine; what would make it badly
    # slow is a worker converting the model again, so that is what is checked, not the seconds
    # (speed is measured by benchmarks).
    print(f"server ready in {server.startup_seconds} s")
    assert server.output().count("converting ") <= 1, server.output()


@pytest.mark.timeout(30, func_only=True)
def test_models_health_metrics(server, client):
    models = client.get("/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == "smollm2-135m"
    assert models["data"][0]["max_model_len"] == NUM_PAGES * PAGE_SIZE
    assert httpx.get(server.url + "/health").json() == {"status": "ok"}  # no key needed
    m = metrics(server)
    for name in (
        "minisgl_kv_pages_total",
        "minisgl_kv_pages_free",
        "minisgl_running_requests",
        "minisgl_waiting_requests",
        "minisgl_generated_tokens_total",
    ):
        assert name in m
    assert m["minisgl_kv_pages_total"] == NUM_PAGES
    text = httpx.get(server.url + "/metrics").text
    assert "# TYPE minisgl_generated_tokens_total counter" in text
    assert "# TYPE minisgl_kv_pages_free gauge" in text


# ---------------------------------------------------------------- the OpenAI protocol


@pytest.mark.timeout(60, func_only=True)
def test_chat_stream_exact_sse_framing(client):
    body = chat_body(max_tokens=6, temperature=0, ignore_eos=True, stream=True, stream_options={"include_usage": True})
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        raw = r.read().decode()
    payloads = parse_sse(raw)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    *content, final, usage = chunks[1:]
    assert content and all(c["choices"][0]["finish_reason"] is None for c in content)
    assert all(c["usage"] is None for c in chunks[:-1])
    assert final["choices"][0]["finish_reason"] == "length" and final["choices"][0]["delta"] == {}
    assert usage["choices"] == []
    assert usage["usage"]["completion_tokens"] == 6
    assert usage["usage"]["prompt_tokens"] > 5
    assert usage["usage"]["total_tokens"] == usage["usage"]["prompt_tokens"] + 6


@pytest.mark.timeout(60, func_only=True)
def test_a_stream_is_stamped_at_every_point_of_its_path_to_the_first_token(server, client):
    """The stamps of the real processes (message/stamps.py), served on GET /debug/stages: every
    point, in the order of the path, and its stages on /metrics. Order only, never durations."""
    from minisgl_edu.message.stamps import POINTS

    body = chat_body("Count to three.", max_tokens=4, temperature=0, ignore_eos=True, stream=True)
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        assert parse_sse(r.read().decode())[-1] == "[DONE]"
    kept = client.get("/debug/stages", params={"last": 1}).json()
    assert kept["points"] == list(POINTS)
    stamps = kept["requests"][-1]["stamps"]
    assert list(stamps) == list(POINTS)
    times = [stamps[p] for p in POINTS]
    assert times == sorted(times)
    assert httpx.get(server.url + "/debug/stages").status_code == 401  # behind the API key like /v1
    assert 'minisgl_first_token_stage_seconds_count{stage="prefill"}' in httpx.get(server.url + "/metrics").text


@pytest.mark.timeout(60, func_only=True)
def test_stream_and_non_stream_give_the_same_greedy_text(client):
    body = chat_body("Name three colors.", max_tokens=12, temperature=0)
    full = client.post("/v1/chat/completions", json=body).json()
    assert full["object"] == "chat.completion"
    msg = full["choices"][0]["message"]
    assert msg["role"] == "assistant" and msg["content"]
    assert full["choices"][0]["finish_reason"] in ("stop", "length")
    assert full["usage"]["completion_tokens"] <= 12
    with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
        payloads = parse_sse(r.read().decode())
    streamed = "".join(json.loads(p)["choices"][0]["delta"].get("content") or "" for p in payloads[:-1])
    assert streamed == msg["content"]
    assert "usage" not in json.loads(payloads[-2])  # not asked for: no usage field at all


@pytest.mark.timeout(60, func_only=True)
def test_openai_client_chat_and_completions(oai):
    r = oai.chat.completions.create(
        model="smollm2-135m", messages=[{"role": "user", "content": "Hi!"}], max_tokens=8, temperature=0
    )
    assert r.choices[0].message.content and r.usage.completion_tokens <= 8
    stream = oai.chat.completions.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": "Hi!"}],
        max_tokens=8,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == r.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == r.usage.completion_tokens

    c = oai.completions.create(model="smollm2-135m", prompt="The capital of France is", max_tokens=6, temperature=0)
    assert c.object == "text_completion" and c.choices[0].text and c.choices[0].finish_reason == "length"
    assert c.usage.prompt_tokens == 5
    parts = list(
        oai.completions.create(
            model="smollm2-135m", prompt="The capital of France is", max_tokens=6, temperature=0, stream=True
        )
    )
    assert "".join(p.choices[0].text for p in parts) == c.choices[0].text
    assert parts[-1].choices[0].finish_reason == "length"


@pytest.mark.timeout(60, func_only=True)
def test_openai_client_fields_that_change_nothing_are_accepted_and_unknown_ones_named(oai):
    import openai

    first = [{"role": "user", "content": "Hi!"}]
    r = oai.chat.completions.create(model="smollm2-135m", messages=first, max_tokens=8, temperature=0)
    # A second turn with the reply appended as the client returned it (refusal, tool_calls ... set
    # to null), and every OpenAI field that does not change an answer.
    again = oai.chat.completions.create(
        model="smollm2-135m",
        messages=[*first, r.choices[0].message, {"role": "user", "content": "Hi!"}],
        max_completion_tokens=8,
        temperature=0,
        user="user-1",
        metadata={"run": "test"},
        store=False,
        service_tier="auto",
        prompt_cache_key="k",
        safety_identifier="s",
        seed=1,
        n=1,
    )
    assert again.choices[0].message.content
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(
            model="smollm2-135m", messages=first, max_tokens=8, extra_body={"min_new_tokens": 4}
        )
    assert e.value.status_code == 400
    assert (e.value.body["param"], e.value.body["code"]) == ("min_new_tokens", "unknown_parameter")


@pytest.mark.timeout(60, func_only=True)
def test_completion_with_token_ids_matches_text_prompt(client):
    a = client.post("/v1/completions", json={"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0}).json()
    ids = [6403, 1980, 253, 655]  # "Once upon a time" in SmolLM2's vocabulary
    b = client.post("/v1/completions", json={"prompt": ids, "max_tokens": 5, "temperature": 0}).json()
    assert a["usage"]["prompt_tokens"] == b["usage"]["prompt_tokens"] == 4
    assert a["choices"][0]["text"] == b["choices"][0]["text"]


@pytest.mark.timeout(60, func_only=True)
def test_stop_string_cuts_the_text(client):
    body = {"prompt": "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,", "max_tokens": 24, "temperature": 0, "ignore_eos": True}
    plain = client.post("/v1/completions", json=body).json()["choices"][0]["text"]
    # Stop at the first occurrence of the third token-ish piece of the greedy continuation.
    stop = plain.strip().split(",")[2].strip()
    assert stop
    cut = client.post("/v1/completions", json={**body, "stop": [stop, "never-appears"]}).json()
    assert cut["choices"][0]["finish_reason"] == "stop"
    assert cut["choices"][0]["text"] == plain[: plain.index(stop)]
    with client.stream("POST", "/v1/completions", json={**body, "stop": stop, "stream": True}) as r:
        payloads = parse_sse(r.read().decode())
    streamed = "".join(json.loads(p)["choices"][0]["text"] for p in payloads[:-1])
    assert streamed == plain[: plain.index(stop)]


@pytest.mark.timeout(60, func_only=True)
def test_seeded_sampling_is_reproducible(client):
    body = chat_body("Tell me a story.", max_tokens=10, temperature=1.0, top_p=0.95, top_k=50, seed=1234)
    a = client.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"]
    b = client.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"]
    assert a == b


# ---------------------------------------------------------------- errors


BAD_REQUESTS = {
    "malformed json": ("/v1/chat/completions", b'{"messages": [', "invalid_json"),
    "not an object": ("/v1/chat/completions", b"[1, 2]", "invalid_json"),
    "missing messages": ("/v1/chat/completions", {"model": "x"}, "messages"),
    "empty messages": ("/v1/chat/completions", {"messages": []}, "messages"),
    "unknown role": ("/v1/chat/completions", {"messages": [{"role": "wizard", "content": "hi"}]}, "role"),
    "content wrong type": ("/v1/chat/completions", {"messages": [{"role": "user", "content": 42}]}, "content"),
    "max_tokens string": ("/v1/chat/completions", chat_body(max_tokens="10"), "max_tokens"),
    "max_tokens zero": ("/v1/chat/completions", chat_body(max_tokens=0), "max_tokens"),
    "max_completion_tokens negative": ("/v1/chat/completions", chat_body(max_completion_tokens=-3), "max_tokens"),
    "temperature negative": ("/v1/chat/completions", chat_body(temperature=-0.5), "temperature"),
    "top_p zero": ("/v1/chat/completions", chat_body(top_p=0.0), "top_p"),
    "top_p above one": ("/v1/chat/completions", chat_body(top_p=1.5), "top_p"),
    "stream not bool": ("/v1/chat/completions", chat_body(stream="yes"), "stream"),
    "prompt too long": ("/v1/completions", {"prompt": "hello " * 9000, "max_tokens": 5}, "maximum context length"),
    "prompt longer than the kv cache": (
        "/v1/completions",
        {"prompt": "hello " * (NUM_PAGES * PAGE_SIZE + 10)},
        "tokens",
    ),
    "token id outside vocab": ("/v1/completions", {"prompt": [1, 2, 49152]}, "vocabulary"),
    "negative token id": ("/v1/completions", {"prompt": [5, -1]}, "vocabulary"),
    "empty prompt": ("/v1/completions", {"prompt": ""}, "prompt"),
}


@pytest.mark.timeout(60, func_only=True)
@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_requests_get_openai_errors(client, case):
    path, body, needle = BAD_REQUESTS[case]
    for stream in (False, True):
        if isinstance(body, dict):
            r = client.post(path, json={**body, "stream": body.get("stream", stream)})
        else:
            r = client.post(path, content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert set(err) >= {"message", "type", "code"}
        assert err["type"] == "invalid_request_error"
        assert needle in err["message"] or needle == err["code"] or needle in (err.get("param") or ""), err


@pytest.mark.timeout(60, func_only=True)
def test_server_keeps_serving_after_errors(client, oai):
    import openai

    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model="smollm2-135m", messages=[], max_tokens=5)
    assert "messages" in str(e.value)
    r = client.post("/v1/chat/completions", json=chat_body(max_tokens=2, temperature=0))
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] <= 2


@pytest.mark.timeout(30, func_only=True)
def test_api_key_is_required_on_v1(server):
    body = chat_body(max_tokens=1)
    assert httpx.post(server.url + "/v1/chat/completions", json=body).status_code == 401
    r = httpx.post(server.url + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    assert httpx.get(server.url + "/v1/models").status_code == 401
    assert httpx.get(server.url + "/health").status_code == 200
    assert httpx.get(server.url + "/metrics").status_code == 200


# ---------------------------------------------------------------- abort and load


@pytest.mark.timeout(90, func_only=True)
def test_cut_streams_are_aborted_and_free_their_pages(server):
    start = wait_idle(server, metrics(server)["minisgl_kv_pages_total"])
    max_tokens = 1200  # with the prompt, within the test server's 1,536-token context
    body = chat_body(
        "Write a very long essay about the sea.", max_tokens=max_tokens, temperature=0, ignore_eos=True, stream=True
    )
    for _ in range(3):
        before = metrics(server)["minisgl_generated_tokens_total"]
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as c:
            with c.stream("POST", "/v1/chat/completions", json=body) as r:
                assert r.status_code == 200
                lines = r.iter_lines()
                got = [next(lines) for _ in range(6)]  # a few chunks ...
                assert any("content" in x for x in got)
                # ... while the request holds its pages ...
                wait_metrics(
                    server, lambda m: m["minisgl_kv_pages_free"] < start["minisgl_kv_pages_free"], "holding pages"
                )
        # ... then hang up mid-stream: the server aborts it and every page comes back.
        after = wait_idle(server, start["minisgl_kv_pages_free"])
        # Stopped, not run to its end (ignore_eos: only an abort ends it before max_tokens).
        made = after["minisgl_generated_tokens_total"] - before
        assert 0 < made < max_tokens, made


@pytest.mark.timeout(90, func_only=True)
def test_non_stream_client_timeout_aborts_the_request(server):
    start = wait_idle(server, metrics(server)["minisgl_kv_pages_total"])
    body = chat_body("Write a very long essay.", max_tokens=600, temperature=0, ignore_eos=True)
    timed_out = threading.Event()

    def client():
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.url + "/v1/chat/completions", json=body, headers=AUTH, timeout=1.5)
        timed_out.set()

    t = threading.Thread(target=client)
    t.start()
    # Once it decodes, pause the scheduler until the client has given up, so the request cannot
    # run to its end first on a fast machine.
    while t.is_alive() and metrics(server)["minisgl_running_requests"] < 1:
        time.sleep(0.05)
    with paused(server):
        t.join(30)
    assert timed_out.is_set(), "the client did not time out"
    after = wait_idle(server, start["minisgl_kv_pages_free"])
    assert after["minisgl_generated_tokens_total"] - start["minisgl_generated_tokens_total"] < 600


@pytest.mark.timeout(120, func_only=True)
def test_16_concurrent_streams_all_complete(server):
    async def one(c: httpx.AsyncClient, i: int) -> tuple[str, str]:
        body = chat_body(f"Count to {i}.", max_tokens=8, temperature=0, stream=True)
        async with c.stream("POST", "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200
            payloads = parse_sse((await r.aread()).decode())
        assert payloads[-1] == "[DONE]"
        final = json.loads(payloads[-2])["choices"][0]["finish_reason"]
        text = "".join(json.loads(p)["choices"][0]["delta"].get("content") or "" for p in payloads[:-1])
        return final, text

    async def main():
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=90, limits=limits) as c:
            return await asyncio.gather(*(one(c, i) for i in range(16)))

    results = asyncio.run(main())
    assert len(results) == 16
    assert all(reason in ("stop", "length") for reason, _ in results)
    assert sum(1 for _, text in results if text) >= 15
    wait_idle(server, metrics(server)["minisgl_kv_pages_total"])


# ---------------------------------------------------------------- shutdown (ends the module's server)


@pytest.mark.timeout(60, func_only=True)
def test_sigterm_shuts_down_cleanly(server):
    workers = dict(server.workers)
    assert workers and server.ipc_dirs()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(30) == 0, server.output()
    assert_gone(workers)
    assert server.ipc_dirs() == []


# ---------------------------------------------------------------- servers of their own


@pytest.mark.timeout(300)
def test_dead_worker_gives_503_and_the_server_exits(tmp_path):
    srv = ServerProcess(tmp_path)
    try:
        srv.wait_ready()
        sched = next(pid for pid, name in srv.workers.items() if name == "minisgl-TP0-scheduler")
        result = {}

        def long_request():
            body = chat_body("Write a long essay.", max_tokens=600, temperature=0, ignore_eos=True)
            result["r"] = httpx.post(srv.url + "/v1/chat/completions", json=body, timeout=60)

        t = threading.Thread(target=long_request)
        t.start()
        deadline = time.monotonic() + 30
        while metrics(srv)["minisgl_running_requests"] < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(sched, signal.SIGKILL)
        t.join(30)
        r = result["r"]
        assert r.status_code == 503
        assert "minisgl-TP0-scheduler" in r.json()["error"]["message"]
        assert srv.proc.wait(30) == 1
        out = srv.output()
        assert re.search(r"error: worker minisgl-TP0-scheduler .*died", out), out
        assert_gone(srv.workers)
        assert srv.ipc_dirs() == []
    finally:
        srv.stop()


@pytest.mark.timeout(120)
def test_sigterm_to_the_whole_process_group_is_a_clean_shutdown(tmp_path, tiny_model_dir):
    """`timeout`, `kill -- -PGID` and systemd signal every process at once: the workers die of
    the same SIGTERM the server got, which is a shutdown (exit 0), not a crash report."""
    srv = ServerProcess(tmp_path, "--model", tiny_model_dir, new_session=True)
    try:
        srv.wait_ready()
        os.killpg(srv.proc.pid, signal.SIGTERM)
        assert srv.proc.wait(30) == 0, srv.output()
        assert "died" not in srv.output()
        assert_gone(srv.workers)
        assert srv.ipc_dirs() == []
    finally:
        srv.stop()


@pytest.mark.timeout(120)
def test_sigterm_to_one_worker_is_still_reported(tmp_path, tiny_model_dir):
    srv = ServerProcess(tmp_path, "--model", tiny_model_dir, new_session=True)
    try:
        srv.wait_ready()
        detok = next(pid for pid, name in srv.workers.items() if name == "minisgl-detokenizer-0")
        os.kill(detok, signal.SIGTERM)
        assert srv.proc.wait(30) == 1, srv.output()
        assert re.search(r"error: worker minisgl-detokenizer-0 .*died \(killed by SIGTERM\)", srv.output())
        assert_gone(srv.workers)
    finally:
        srv.stop()


@pytest.mark.timeout(300)
def test_shell_chats_resets_and_exits(tmp_path):
    srv = ServerProcess(tmp_path, "--shell", shell=True)
    try:
        srv.wait_ready(http=False)
        srv.proc.stdin.write("Hello! What is your name?\n/reset\nSay hi.\n/exit\n")
        srv.proc.stdin.flush()
        assert srv.proc.wait(120) == 0, srv.output()
        out = srv.output()
        assert "(conversation cleared)" in out
        after_ready = out.split("ready in", 1)[1]
        # Two answers were printed: some text after each prompt marker besides the commands.
        answers = [a.strip() for a in after_ready.split("> ")[1:]]
        assert len([a for a in answers if a and a != "(conversation cleared)"]) >= 2, out
        assert_gone(srv.workers)
        assert srv.ipc_dirs() == []
    finally:
        srv.stop()
