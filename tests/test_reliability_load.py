"""Reliability under load and cancellation: the real server with the real default model (CPU).

One server for the module, small on purpose so that queues form: 8 requests decode together
(`--max-running-requests 8`), at most 64 more wait (`--max-queue 64`), and prefill works in chunks
of 128 tokens (`--max-prefill-tokens 128`), so that a long prompt is prefilled over many steps and
can be aborted half-way. Every test ends by checking that the server is idle again: all KV pages
free (`minisgl_kv_pages_free == minisgl_kv_pages_total`, cached prefix pages count as free), no
request running or waiting, none in flight in the API server; and that the next request is served.

Everything here generates few tokens (max_tokens 8 for the load tests); the long requests are cut.
"""

from __future__ import annotations

import asyncio
import json
import random
import time

import httpx
import pytest
from live_server import chat_body, metrics, parse_sse, paused, running, wait_idle

pytestmark = pytest.mark.slow

MAX_RUNNING = 8
MAX_QUEUE = 64
NUM_PAGES = 400
PAGE_SIZE = 16


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    args = ("--num-pages", str(NUM_PAGES), "--page-size", str(PAGE_SIZE), "--max-running-requests", str(MAX_RUNNING))
    args += ("--max-queue", str(MAX_QUEUE), "--max-prefill-tokens", "128", "--request-timeout", "240")
    with running(tmp_path_factory.mktemp("load"), *args) as srv:
        yield srv


def assert_next_request_is_served(server) -> None:
    r = httpx.post(
        server.url + "/v1/chat/completions", json=chat_body("Say hi.", max_tokens=3, temperature=0), timeout=60
    )
    assert r.status_code == 200, r.text
    assert r.json()["usage"]["completion_tokens"] <= 3


def check_chat_stream(raw: str) -> str:
    """Exact SSE framing of a finished chat stream; returns the text."""
    payloads = parse_sse(raw)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)


async def _stream(c: httpx.AsyncClient, body: dict) -> tuple[int, str]:
    async with c.stream("POST", "/v1/chat/completions", json=body) as r:
        raw = (await r.aread()).decode()
        return r.status_code, raw


def _client(server, timeout: float = 280) -> httpx.AsyncClient:
    # A queued stream sees no byte until its first token (the status line waits for it, so that a
    # rejected prompt still gets a 400): on a busy 2-core machine the last of 64 waits minutes.
    return httpx.AsyncClient(base_url=server.url, timeout=timeout, limits=httpx.Limits(max_connections=200))


# ---------------------------------------------------------------- load


@pytest.mark.timeout(300, func_only=True)
def test_64_concurrent_streams_with_a_queue_all_complete(server):
    """64 streaming clients at once; 8 run, 56 queue (longer than --max-running-requests)."""
    wait_idle(server)

    async def main():
        async with _client(server) as c:
            bodies = [chat_body(f"Count to {i}.", max_tokens=8, temperature=0, stream=True) for i in range(64)]
            return await asyncio.gather(*(_stream(c, b) for b in bodies))

    t0 = time.monotonic()
    results = asyncio.run(main())
    print(f"64 streams x 8 tokens, {MAX_RUNNING} running at a time: {time.monotonic() - t0:.1f} s")
    assert [status for status, _ in results] == [200] * 64
    texts = [check_chat_stream(raw) for _, raw in results]
    assert sum(1 for t in texts if t) >= 60  # (a greedy answer may be EOS at once: empty, still well framed)
    wait_idle(server)
    assert_next_request_is_served(server)


@pytest.mark.timeout(240, func_only=True)
def test_a_full_queue_gets_503_with_retry_after_and_waiting_requests_abort(server):
    """max_running + max_queue requests in flight: the next gets 503 at once. Then every client
    hangs up: 8 requests are aborted while decoding and 64 while waiting, and all is freed."""
    wait_idle(server)
    capacity = MAX_RUNNING + MAX_QUEUE

    async def main():
        async with _client(server) as c:
            body = chat_body("Write a long story about a dragon.", max_tokens=400, temperature=0, ignore_eos=True)
            tasks = [
                asyncio.create_task(c.post("/v1/chat/completions", json={**body, "seed": i})) for i in range(capacity)
            ]
            try:
                deadline = time.monotonic() + 60
                while True:  # every request has reached the scheduler: 8 decoding, 64 waiting
                    m = metrics(server)
                    if (
                        m["minisgl_http_requests_in_flight"] == capacity
                        and m["minisgl_waiting_requests"] == MAX_QUEUE
                        and m["minisgl_running_requests"] == MAX_RUNNING
                    ):
                        break
                    assert time.monotonic() < deadline, m
                    assert not any(t.done() for t in tasks), [t.result().text for t in tasks if t.done()][:2]
                    await asyncio.sleep(0.2)
                # Paused, the scheduler frees no slot: an answer now can only be a refusal made
                # at once, however fast or slow the machine.
                with paused(server):
                    r = await c.post("/v1/chat/completions", json=chat_body(max_tokens=2))
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            return r

    r = asyncio.run(main())
    assert r.status_code == 503, r.text
    assert r.headers["retry-after"].isdigit()
    err = r.json()["error"]
    assert err["code"] == "queue_full" and err["type"] == "service_unavailable"
    wait_idle(server, timeout=30)
    assert_next_request_is_served(server)


# ---------------------------------------------------------------- cancellation


@pytest.mark.timeout(240, func_only=True)
def test_32_streams_cut_at_random_points_free_everything(server):
    start = wait_idle(server)
    rng = random.Random(7)
    # (max_tokens, hang up after this many SSE lines, or after this many seconds)
    plans = [(rng.randint(20, 60), rng.choice([rng.randint(1, 8), rng.uniform(0.05, 4.0)])) for _ in range(32)]

    async def one(c: httpx.AsyncClient, i: int) -> str:
        max_tokens, cut = plans[i]
        body = chat_body(
            f"Tell me fact number {i} about the moon.",
            max_tokens=max_tokens,
            temperature=0,
            ignore_eos=True,
            stream=True,
        )
        if isinstance(cut, int):  # hang up after reading a few lines of the stream
            keep = cut
            async with c.stream("POST", "/v1/chat/completions", json=body) as r:
                assert r.status_code == 200
                n = 0
                async for _ in r.aiter_lines():
                    n += 1
                    if n >= keep:
                        break
            return "chunks"
        # hang up after a random time: while waiting, in prefill, or decoding
        try:
            await asyncio.wait_for(_stream(c, body), timeout=cut)
            return "finished"
        except asyncio.TimeoutError:
            return "time"

    async def main():
        async with _client(server) as c:
            return await asyncio.gather(*(one(c, i) for i in range(32)))

    outcomes = asyncio.run(main())
    print("outcomes:", {k: outcomes.count(k) for k in set(outcomes)})
    after = wait_idle(server, timeout=30)
    # The cut requests were stopped early: fewer tokens than all 32 would have made.
    made = after["minisgl_generated_tokens_total"] - start["minisgl_generated_tokens_total"]
    assert made < sum(max_tokens for max_tokens, _ in plans), made
    assert_next_request_is_served(server)


async def _cut_when(server, body: dict, condition, what: str, timeout: float = 60) -> dict:
    """Send `body`, hang up as soon as `condition(metrics)` holds; return the metrics seen then."""
    async with _client(server) as c:
        task = asyncio.create_task(c.post("/v1/completions", json=body))
        deadline = time.monotonic() + timeout
        try:
            while True:
                m = metrics(server)
                if condition(m):
                    return m
                assert not task.done(), f"finished before it could be cut {what}: {task.result().text[:200]}"
                assert time.monotonic() < deadline, f"never saw it {what}: {m}"
                await asyncio.sleep(0.02)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


@pytest.mark.timeout(180, func_only=True)
def test_abort_mid_chunked_prefill_and_mid_decode_frees_everything(server):
    wait_idle(server)
    total = metrics(server)["minisgl_kv_pages_total"]
    # ~2400 tokens prefilled 128 at a time: ~19 prefill steps. Cut while some pages hold part of it.
    long_prompt = " ".join(f"word{i}" for i in range(800))
    body = {"prompt": long_prompt, "max_tokens": 300, "temperature": 0, "ignore_eos": True}
    seen = asyncio.run(
        _cut_when(
            server,
            body,
            lambda m: m["minisgl_waiting_requests"] == 1 and m["minisgl_kv_pages_free"] < total - 2,
            "mid prefill",
        )
    )
    assert seen["minisgl_running_requests"] == 0  # still prefilling, not decoding yet
    wait_idle(server)
    assert_next_request_is_served(server)

    start = metrics(server)["minisgl_generated_tokens_total"]
    body = {"prompt": "Once upon a time", "max_tokens": 300, "temperature": 0, "ignore_eos": True}
    asyncio.run(
        _cut_when(
            server,
            body,
            lambda m: m["minisgl_running_requests"] == 1 and m["minisgl_generated_tokens_total"] > start + 5,
            "decoding",
        )
    )
    after = wait_idle(server)
    assert after["minisgl_generated_tokens_total"] - start < 300
    assert_next_request_is_served(server)
