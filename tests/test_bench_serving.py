"""The online benchmark client (`minisgl_edu.bench.serving`) against fake servers, with no model.

Two fakes. `ScriptedServer` is in-process (httpx.MockTransport): its stream is an async generator
that the client pulls chunk by chunk, and it moves a fake clock forward by a known amount just
before each chunk, so the client reads the clock for chunk k before the server can move it again.
Every TTFT and ITL is then known in advance, on any machine. `SocketServer` is a real HTTP server
(uvicorn in a thread, on a free port) for what needs a socket: refused connections, error
statuses, a stream cut mid-way, the command line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import threading
import time
from collections import Counter

import httpx
import pytest

from minisgl_edu.bench import serving
from minisgl_edu.bench.serving import BenchConfig, run_benchmark
from minisgl_edu.bench.serving_stats import RequestResult, output_tokens_per_bin, percentiles, summarize
from minisgl_edu.bench.workload import (
    SAFE_TOKEN_IDS,
    arrival_times,
    chat_prompts,
    estimated_tokens,
    make_workload,
    random_token_prompts,
)


def approx(x):
    # Only float rounding: the fake clock's times are sums of exact millisecond steps.
    return pytest.approx(x, abs=1e-9)


def sse(event) -> bytes:
    return ("data: [DONE]\n\n" if event == "[DONE]" else f"data: {json.dumps(event)}\n\n").encode()


def text_chunk(text: str, finish=None) -> dict:
    return {"object": "text_completion", "choices": [{"index": 0, "text": text, "finish_reason": finish}]}


def chat_chunk(text=None, role=False, finish=None) -> dict:
    delta = {"role": "assistant", "content": ""} if role else ({"content": text} if text else {})
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def usage_chunk(prompt: int, completion: int, cached=None) -> dict:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {"choices": [], "usage": usage}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0  # not 0: the client must measure from its own start

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms / 1000


class ScriptedServer:
    """GET /v1/models, and streaming POSTs: `script(k, body)` gives request k's (delay ms, event) list."""

    def __init__(self, clock: FakeClock, script) -> None:
        self.clock, self.script = clock, script
        self.bodies: list[dict] = []
        self.in_flight = self.max_in_flight = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": "fake-model"}]})
        body = json.loads(request.content)
        events = self.script(len(self.bodies), body)
        self.bodies.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

        async def stream():
            for i, (delay_ms, event) in enumerate(events):
                await asyncio.sleep(0)  # let the other requests' tasks run (the concurrency test)
                # Nothing awaits between the clock moving and the chunk reaching the client.
                self.clock.advance(delay_ms)
                if i == len(events) - 1:
                    self.in_flight -= 1
                yield sse(event)

        return httpx.Response(200, content=stream(), headers={"content-type": "text/event-stream"})

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)


def three_chunks(k: int, body: dict) -> list:
    """Request k: first text after 10+k ms, then gaps of 2 and 4 ms, 1 ms to the finish chunk;
    5 completion tokens in 3 chunks (the last holds three); cached tokens reported for even k."""
    return [
        (10 + k, text_chunk("a")),
        (2, text_chunk("b")),
        (4, text_chunk("cde")),
        (1, text_chunk("", finish="length")),
        (0, usage_chunk(len(body["prompt"]), 5, cached=k if k % 2 == 0 else None)),
        (0, "[DONE]"),
    ]


# ---------------------------------------------------------------- statistics


def test_percentiles_are_exact_for_known_values():
    p = percentiles([float(x) for x in reversed(range(101))])  # 0..100: each percentile is a value
    assert (p.count, p.mean, p.p50, p.p90, p.p99, p.max) == (101, 50.0, 50.0, 90.0, 99.0, 100.0)
    p = percentiles([1.0, 2.0, 3.0, 4.0, 5.0], scale=1000)  # linear interpolation between ranks
    assert (p.p50, p.p90, p.p99) == (approx(3000), approx(4600), approx(4960))
    assert percentiles([]) is None


def test_request_metrics_from_timestamps():
    r = RequestResult(0, 0, 0, 0.0, sent_at=1.0, chunk_times=[1.5, 1.75, 2.5], done_at=3.0, completion_tokens=4)
    assert r.ttft == 0.5 and r.itls == [0.25, 0.75] and r.latency == 2.0
    assert r.tpot == approx(1.0 / 3)  # (2.5 - 1.5) s over the 3 tokens after the first
    no_usage = RequestResult(0, 0, 0, 0.0, sent_at=1.0, chunk_times=[1.5, 2.0], done_at=2.0)
    assert no_usage.output_tokens == 2 and no_usage.tpot == 0.5  # counted by chunks
    failed = RequestResult(0, 0, 0, 0.0, sent_at=1.0, chunk_times=[1.5, 2.0], done_at=2.0, error="HTTP 500: x")
    assert (failed.ttft, failed.itls, failed.tpot, failed.latency) == (None, [], None, None)


def test_summary_counts_successes_tokens_and_errors():
    reqs = [RequestResult(i, i, 0, 0.0, sent_at=0.0, chunk_times=[0.1 * (i + 1), 1.5], done_at=2.0) for i in range(3)]
    for i, r in enumerate(reqs):
        r.prompt_tokens, r.completion_tokens = 10, 4
        r.cached_tokens = None if i == 0 else 8
    reqs.append(RequestResult(3, 3, 0, 0.0, sent_at=0.0, done_at=0.5, error="HTTP 429: busy"))
    reqs.append(RequestResult(4, 4, 0, 0.0, sent_at=0.0, done_at=0.5, error="HTTP 429: busy"))
    s = summarize(reqs, duration=2.0)
    assert (s.num_requests, s.succeeded, s.failed, s.errors) == (5, 3, 2, {"HTTP 429: busy": 2})
    assert (s.input_tokens, s.output_tokens, s.cached_tokens) == (30, 12, 16)
    assert (s.request_throughput, s.output_throughput, s.total_throughput) == (1.5, 6.0, 21.0)
    assert (s.ttft_ms.p50, s.ttft_ms.max) == (approx(200), approx(300))
    assert s.e2e_ms.p99 == approx(2000)
    # Two output chunks of 2 tokens each per request: the first ones in [0, 1 s), the last at 1.5 s.
    assert output_tokens_per_bin(reqs, 2.0) == [6.0, 6.0]
    assert s.peak_output_throughput == 6.0


# ---------------------------------------------------------------- workload


def test_poisson_arrivals_are_seeded_and_have_mean_gap_one_over_rate():
    times = arrival_times(20000, request_rate=4.0, seed=7)
    assert times == arrival_times(20000, request_rate=4.0, seed=7)
    assert times != arrival_times(20000, request_rate=4.0, seed=8)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert times[0] == 0.0 and min(gaps) >= 0
    # 20000 exponential gaps: the sample mean's standard error is 0.7% of 1/rate.
    assert sum(gaps) / len(gaps) == pytest.approx(0.25, rel=0.03)
    assert arrival_times(5, float("inf"), seed=7) == [0.0] * 5
    with pytest.raises(ValueError):
        arrival_times(5, 0.0, seed=7)


def test_prompts_are_seeded_and_sized():
    ids = random_token_prompts(4, 50, seed=1)
    assert ids == random_token_prompts(4, 50, seed=1) and ids != random_token_prompts(4, 50, seed=2)
    assert all(len(p) == 50 and all(SAFE_TOKEN_IDS[0] <= t < SAFE_TOKEN_IDS[1] for t in p) for p in ids)
    chats = chat_prompts(6, 300, seed=1)
    assert chats == chat_prompts(6, 300, seed=1)
    assert all(estimated_tokens(c) >= 300 for c in chats)  # one pass over the questions is ~200 tokens
    assert len({c.splitlines()[1] for c in chats}) == 6  # each starts with its own question
    assert len(set(chat_prompts(6, None, seed=1))) == 6


def test_repeated_prompts_come_back_in_rounds():
    plan = make_workload("completions", 3, 8, repeat_prompts=2, request_rate=float("inf"), seed=0)
    assert [(p.index, p.prompt_index, p.round) for p in plan] == [(i, i % 3, i // 3) for i in range(6)]
    assert [p.prompt for p in plan[3:]] == [p.prompt for p in plan[:3]]


def test_edit_prompts_cycle_through_the_repetitive_set():
    from minisgl_edu.bench.chat_prompts import EDIT_REQUESTS

    plan = make_workload("chat", 10, None, 1, float("inf"), seed=0, prompt_set="edits")
    assert [p.prompt for p in plan] == [EDIT_REQUESTS[i % len(EDIT_REQUESTS)] for i in range(10)]
    with pytest.raises(ValueError, match="edits"):
        make_workload("completions", 2, None, 1, float("inf"), seed=0, prompt_set="edits")
    with pytest.raises(ValueError, match="prompt_set"):
        BenchConfig(prompt_set="code")


# ---------------------------------------------------------------- the client, exactly


def test_client_measures_known_delays_exactly():
    clock = FakeClock()
    server = ScriptedServer(clock, three_chunks)
    n = 101
    cfg = BenchConfig(num_prompts=n, input_len=16, output_len=5, concurrency=1, ignore_eos=True, progress=False)
    result = run_benchmark(cfg, clock=clock, transport=server.transport)

    s = result.summary
    assert (s.succeeded, s.failed, result.model) == (n, 0, "fake-model")
    # TTFT 10..110 ms; ITL 101 gaps of 2 ms and 101 of 4 ms; E2E 17..117 ms; TPOT 6 ms / 4 tokens.
    assert (s.ttft_ms.mean, s.ttft_ms.p50, s.ttft_ms.p90, s.ttft_ms.p99) == tuple(map(approx, (60, 60, 100, 109)))
    assert (s.itl_ms.count, s.itl_ms.mean, s.itl_ms.p50, s.itl_ms.p90) == (2 * n, approx(3), approx(3), approx(4))
    assert (s.e2e_ms.p50, s.e2e_ms.p90, s.e2e_ms.p99, s.e2e_ms.max) == tuple(map(approx, (67, 107, 116, 117)))
    assert (s.tpot_ms.p50, s.tpot_ms.p99) == (approx(1.5), approx(1.5))
    duration = sum(17 + k for k in range(n)) / 1000  # the clock moves only in the server
    assert s.duration_s == approx(duration)
    assert (s.output_tokens, s.input_tokens, s.cached_tokens) == (5 * n, 16 * n, sum(range(0, n, 2)))
    assert s.output_throughput == approx(5 * n / duration) and s.request_throughput == approx(n / duration)

    for k, r in enumerate(result.requests):
        assert r.index == k and r.ttft == approx((10 + k) / 1000) and r.itls == [approx(0.002), approx(0.004)]
        assert (r.text, r.completion_tokens, r.prompt_tokens) == ("abcde", 5, 16)
        assert r.cached_tokens == (k if k % 2 == 0 else None)
    # The bodies: what every OpenAI-compatible server needs, sent in the workload's order.
    plan = make_workload("completions", n, 16, 1, float("inf"), seed=0)
    assert [b["prompt"] for b in server.bodies] == [p.prompt for p in plan]
    assert server.bodies[0] == {
        "model": "fake-model",
        "prompt": plan[0].prompt,
        "max_tokens": 5,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }


def test_concurrency_keeps_exactly_n_in_flight():
    server = ScriptedServer(FakeClock(), three_chunks)
    cfg = BenchConfig(num_prompts=7, input_len=4, concurrency=3, progress=False)
    result = run_benchmark(cfg, clock=server.clock, transport=server.transport)
    assert result.summary.succeeded == 7
    assert server.max_in_flight == 3


def test_no_concurrency_cap_sends_all_at_once():
    server = ScriptedServer(FakeClock(), three_chunks)
    result = run_benchmark(BenchConfig(num_prompts=5, input_len=4, progress=False), server.clock, server.transport)
    assert result.summary.succeeded == 5 and server.max_in_flight == 5


def test_poisson_requests_wait_for_their_arrival_time():
    server = ScriptedServer(FakeClock(), three_chunks)  # its clock is not the client's here
    cfg = BenchConfig(num_prompts=6, input_len=4, request_rate=200.0, seed=3, progress=False)
    result = run_benchmark(cfg, transport=server.transport)  # the real clock: asyncio.sleep paces
    assert [r.scheduled_at for r in result.requests] == arrival_times(6, 200.0, seed=3)
    # asyncio may wake a timer up to its clock resolution early; never a whole gap early.
    assert all(r.sent_at >= r.scheduled_at - 1e-3 for r in result.requests)


def test_repeat_prompts_and_chat_bodies():
    def chat_script(k, body):
        return [(0, chat_chunk(role=True)), (5, chat_chunk("hi")), (0, usage_chunk(20, 1, cached=0)), (0, "[DONE]")]

    server = ScriptedServer(FakeClock(), chat_script)
    cfg = BenchConfig(endpoint="chat", num_prompts=3, repeat_prompts=2, concurrency=1, model="m", progress=False)
    result = run_benchmark(cfg, server.clock, server.transport)
    assert [(r.prompt_index, r.round) for r in result.requests] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert [b["messages"] for b in server.bodies[3:]] == [b["messages"] for b in server.bodies[:3]]
    assert all(b["model"] == "m" and "ignore_eos" not in b for b in server.bodies)
    # The role chunk carries no text: TTFT is the first content, 5 ms after sending.
    assert all(r.ttft == approx(0.005) and len(r.chunk_times) == 1 and r.text == "hi" for r in result.requests)


def test_run_benchmark_works_inside_a_running_event_loop():
    server = ScriptedServer(FakeClock(), three_chunks)
    cfg = BenchConfig(num_prompts=2, input_len=4, progress=False)

    async def notebook_cell():  # what a Jupyter cell is: code running inside a live loop
        return run_benchmark(cfg, server.clock, server.transport)

    assert asyncio.run(notebook_cell()).summary.succeeded == 2


# ---------------------------------------------------------------- a real socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SocketServer:
    """A raw ASGI app on uvicorn: request k (in arrival order) behaves as `behaviours[k]`."""

    def __init__(self, behaviours: list[str], api_key: str | None = None) -> None:
        self.behaviours, self.api_key = behaviours, api_key
        self.bodies: list[dict] = []
        self.released = False  # set at teardown: a stalled request may end

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        if self.api_key and headers.get(b"authorization") != f"Bearer {self.api_key}".encode():
            return await self.reply(send, 401, {"error": {"message": "bad key"}})
        if scope["path"] == "/v1/models":
            return await self.reply(send, 200, {"object": "list", "data": [{"id": "socket-model"}]})
        raw = b""
        while True:
            msg = await receive()
            raw += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        body = json.loads(raw)
        kind = self.behaviours[len(self.bodies) % len(self.behaviours)]
        self.bodies.append(body)
        chat = "messages" in body
        chunk = (lambda t: chat_chunk(t)) if chat else (lambda t: text_chunk(t))
        if kind == "429":
            return await self.reply(send, 429, {"error": {"message": "too many requests", "type": "rate_limit"}})
        if kind == "400":
            return await self.reply(send, 400, {"error": {"message": "bad prompt", "type": "invalid_request_error"}})
        if kind == "500":  # not JSON: the text itself is the message
            await send({"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]})
            return await send({"type": "http.response.body", "body": b"Internal Server Error"})
        if kind == "stall":  # never answers (until teardown)
            while not self.released:
                await asyncio.sleep(0.05)
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        events = [chunk("x"), chunk("y")]
        if kind == "cut":
            for e in events:
                await send({"type": "http.response.body", "body": sse(e), "more_body": True})
            return  # returning with the body unfinished: uvicorn drops the connection mid-stream
        if kind == "stream_error":
            events = [chunk("x"), {"error": {"message": "worker died", "type": "service_unavailable"}}]
        else:
            events += [chunk(""), usage_chunk(17, 2)]
            if kind == "ok":
                events.append("[DONE]")
        for e in events:
            await send({"type": "http.response.body", "body": sse(e), "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    @staticmethod
    async def reply(send, status: int, obj: dict) -> None:
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": json.dumps(obj).encode()})


@pytest.fixture
def socket_server():
    import uvicorn

    started = []

    def start(behaviours, api_key=None) -> tuple[str, SocketServer]:
        app = SocketServer(behaviours, api_key)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="critical"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((app, server, thread, sock))
        deadline = time.monotonic() + 30  # a bound on start-up, not a speed check
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "fake server did not start"
            time.sleep(0.01)
        return f"http://127.0.0.1:{sock.getsockname()[1]}", app

    yield start
    for app, server, thread, sock in started:
        app.released = True
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_unreachable_server_fails_every_request_without_raising(capsys, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = run_benchmark(BenchConfig(base_url=url, num_prompts=3, progress=False))
    assert result.server_error.startswith(f"cannot connect to {url}")
    assert [r.ok for r in result.requests] == [False] * 3
    assert all(r.error == result.server_error and r.sent_at is None for r in result.requests)
    assert (result.summary.failed, result.summary.succeeded) == (3, 0)

    out = tmp_path / "r.json"
    assert serving.main(["--base-url", url, "--num-prompts", "2", "--no-progress", "--json", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot connect to {url}")
    assert json.loads(out.read_text())["summary"]["failed"] == 2


def test_errors_and_cut_streams_are_reported_per_request(socket_server):
    kinds = ["429", "500", "400", "cut", "no_done", "stream_error", "ok"]
    url, app = socket_server(kinds)
    result = run_benchmark(BenchConfig(base_url=url, num_prompts=len(kinds), concurrency=1, progress=False))
    assert len(app.bodies) == len(kinds)  # each sent once, no retries
    r = result.requests
    assert (r[0].http_status, r[0].error) == (429, "HTTP 429: too many requests")
    assert (r[1].http_status, r[1].error) == (500, "HTTP 500: Internal Server Error")
    assert (r[2].http_status, r[2].error) == (400, "HTTP 400: bad prompt")
    assert r[3].error.startswith("stream cut before [DONE]: RemoteProtocolError") and len(r[3].chunk_times) == 2
    assert r[4].error == "stream ended without [DONE]"
    assert r[5].error == "error in stream: worker died"
    assert r[6].ok and (r[6].text, r[6].completion_tokens, r[6].prompt_tokens, r[6].cached_tokens) == (
        "xy",
        2,
        17,
        None,
    )
    s = result.summary
    assert (s.succeeded, s.failed, len(s.errors)) == (1, 6, 6)
    table = serving.format_table(result)
    assert "Failed requests:                         6" in table and "1 x HTTP 429: too many requests" in table


def test_a_silent_server_times_out(socket_server):
    url, _ = socket_server(["stall"])
    result = run_benchmark(BenchConfig(base_url=url, num_prompts=1, timeout_s=0.3, progress=False))
    assert result.requests[0].error == "timeout: nothing for 0.3 s (ReadTimeout)"


def test_cli_end_to_end_writes_json_and_plot(socket_server, tmp_path, capsys):
    url, app = socket_server(["ok"], api_key="secret")
    out, fig = tmp_path / "run.json", tmp_path / "run.png"
    argv = [
        *("--base-url", url, "--api-key", "secret", "--endpoint", "chat", "--num-prompts", "3"),
        *("--repeat-prompts", "2", "--concurrency", "2", "--input-len", "40", "--output-len", "2"),
        *("--ignore-eos", "--no-progress", "--json", str(out), "--plot", str(fig)),
    ]
    assert serving.main(argv) == 0
    printed = capsys.readouterr().out
    assert "Serving Benchmark Result" in printed and "Successful requests:                     6" in printed

    data = json.loads(out.read_text())
    assert data["model"] == "socket-model" and data["server_error"] is None
    assert data["config"]["request_rate"] == "inf" and "api_key" not in data["config"]
    assert data["config"]["concurrency"] == 2 and data["config"]["endpoint"] == "chat"
    s = data["summary"]
    assert (s["succeeded"], s["failed"], s["output_tokens"], s["input_tokens"]) == (6, 0, 12, 6 * 17)
    for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
        assert set(s[key]) == {"count", "mean", "p50", "p90", "p99", "max"}
    assert len(data["requests"]) == 6
    for rec in data["requests"]:
        assert rec["error"] is None and rec["ttft"] > 0 and len(rec["itls"]) == 1 and rec["latency"] >= rec["ttft"]
        assert {"index", "prompt_index", "round", "sent_at", "chunk_times", "cached_tokens", "http_status"} <= set(rec)

    assert all(b["ignore_eos"] is True and b["max_tokens"] == 2 for b in app.bodies)
    contents = [b["messages"][0]["content"] for b in app.bodies]
    # Each of the 3 prompts twice. Not "the first 3 bodies are round 1": with 2 requests in flight, a
    # round-2 request can reach the server before the last round-1 one does.
    assert sorted(Counter(contents).values()) == [2, 2, 2]
    assert all(estimated_tokens(c) >= 40 for c in contents)
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_client_processes_share_the_requests_and_join_their_records(socket_server):
    url, app = socket_server(["ok"])
    cfg = BenchConfig(
        base_url=url, endpoint="chat", num_prompts=7, concurrency=3, output_len=2, progress=False, client_processes=2
    )
    result = run_benchmark(cfg)
    # Every planned request once, in the plan's order, with the prompt the one-process run sends.
    one = run_benchmark(dataclasses.replace(cfg, client_processes=1))
    assert [r.index for r in result.requests] == list(range(7))
    assert [r.prompt_index for r in result.requests] == [r.prompt_index for r in one.requests]
    assert len(app.bodies) == 14 and all(r.ok and r.text == "xy" for r in result.requests)
    sent = sorted(b["messages"][0]["content"] for b in app.bodies[:7])
    assert sent == sorted(b["messages"][0]["content"] for b in app.bodies[7:])
    # One time axis: every request was sent after the common start and ended before the duration.
    assert all(0 <= r.sent_at <= r.done_at <= result.summary.duration_s for r in result.requests)
    assert result.summary.succeeded == 7 and result.client_cpu_s > 0
    assert "Client CPU (2 processes, % of a core each)" in serving.format_table(result)


def test_client_processes_are_at_most_the_concurrency_and_need_the_real_clock(socket_server):
    with pytest.raises(ValueError, match="at most the concurrency"):
        BenchConfig(concurrency=2, client_processes=3)
    with pytest.raises(ValueError, match="system's clock"):
        run_benchmark(BenchConfig(client_processes=2, progress=False), clock=FakeClock())
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there: one error, as with one process
    result = run_benchmark(BenchConfig(base_url=url, num_prompts=3, progress=False, client_processes=2))
    assert result.server_error.startswith(f"cannot connect to {url}") and result.summary.failed == 3
