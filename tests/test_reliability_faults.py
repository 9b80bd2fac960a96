"""Reliability under faults: per-request timeouts, and worker processes killed with SIGKILL.

The servers here run the tiny random-weight model (`tiny_model_dir`: same tokenizer, 2 layers),
which starts fast; its text is nonsense, which does not matter here.

* The module's server has `--request-timeout 4` and runs one request at a time, so a second one
  waits: a request that is too slow, running or waiting, is aborted, freed, and gets 504 (an error
  event in a stream). At the end its tokenizer process is killed.
* The detokenizer gets a server of its own. (The scheduler kill is in test_server.py.)

After a kill: the requests in flight get an error naming the dead worker (503, or an error event in a stream),
new requests get 503 JSON, the server exits with code 1 naming the dead worker, and none of its
processes is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time

import httpx
import pytest
from live_server import ServerProcess, assert_gone, metrics, parse_sse, paused, wait_idle

pytestmark = pytest.mark.slow

TIMEOUT = 4.0
LONG = {"prompt": "Once upon a time", "max_tokens": 3000, "temperature": 0, "ignore_eos": True}


def tiny_server(tmp_path, model_dir: str, *extra: str) -> ServerProcess:
    return ServerProcess(tmp_path, "--model", model_dir, "--num-pages", "512", "--max-running-requests", "1", *extra)


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_model_dir):
    srv = tiny_server(tmp_path_factory.mktemp("faults"), tiny_model_dir, "--request-timeout", str(TIMEOUT))
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


def assert_timeout_error(r: httpx.Response, took: float) -> None:
    assert r.status_code == 504, r.text
    err = r.json()["error"]
    assert err["code"] == "request_timeout" and err["type"] == "timeout_error"
    assert took >= TIMEOUT - 0.5, took  # not cut before its time


async def wait_running(srv: ServerProcess, task: asyncio.Task) -> None:
    """Until the scheduler reports a running request, or `task` (that request) has ended."""
    while not task.done() and metrics(srv)["minisgl_running_requests"] < 1:
        await asyncio.sleep(0.05)


# ---------------------------------------------------------------- --request-timeout
# Each test pauses the scheduler (SIGSTOP) once its requests are in place, so they cannot finish
# before the deadline on any machine, fast or slow; the API server's clock still runs.


@pytest.mark.timeout(60, func_only=True)
def test_request_timeout_aborts_and_frees(server):
    wait_idle(server)

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as c:
            t0 = time.monotonic()
            task = asyncio.create_task(c.post("/v1/completions", json=LONG))
            await wait_running(server, task)
            with paused(server):
                r = await task
            return r, time.monotonic() - t0

    r, took = asyncio.run(main())
    assert_timeout_error(r, took)
    m = wait_idle(server)
    assert 0 < m["minisgl_generated_tokens_total"] < 3000  # stopped early, not run to the end
    r = httpx.post(server.url + "/v1/completions", json={**LONG, "max_tokens": 3}, timeout=30)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 3


@pytest.mark.timeout(60, func_only=True)
def test_request_timeout_ends_a_stream_with_an_error_event(server):
    wait_idle(server)
    t0 = time.monotonic()
    with httpx.stream("POST", server.url + "/v1/completions", json={**LONG, "stream": True}, timeout=60) as r:
        assert r.status_code == 200
        chunks = r.iter_bytes()
        raw = b""
        while b"\n\n" not in raw:  # the stream has begun
            raw += next(chunks)
        with paused(server):
            raw += b"".join(chunks)
    took = time.monotonic() - t0
    assert took >= TIMEOUT - 0.5, took
    payloads = parse_sse(raw.decode())
    assert len(payloads) > 1 and payloads[-1] != "[DONE]"
    assert json.loads(payloads[-1])["error"]["code"] == "request_timeout"
    assert all("choices" in json.loads(p) for p in payloads[:-1])
    wait_idle(server)


@pytest.mark.timeout(60, func_only=True)
def test_request_timeout_covers_time_spent_waiting(server):
    """One request runs (--max-running-requests 1), the other waits behind it: both time out."""
    wait_idle(server)

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as c:
            first = asyncio.create_task(c.post("/v1/completions", json=LONG))
            await wait_running(server, first)
            with paused(server):
                t0 = time.monotonic()
                second = await c.post("/v1/completions", json={**LONG, "prompt": "Another prompt"})
                took = time.monotonic() - t0
                return await first, second, took

    first, second, took = asyncio.run(main())
    assert first.status_code == 504, first.text
    assert_timeout_error(second, took)
    wait_idle(server)


# ---------------------------------------------------------------- killed workers


def kill_worker_during_requests(srv: ServerProcess, worker: str) -> None:
    """Kill `worker` while a stream and a non-streaming request are in flight, and check the aftermath.

    The scheduler is paused around the kill, so both requests are still in flight when it lands,
    however fast the machine. The errors must name the dead worker: that tells them apart from a
    request timeout, without timing how soon they come."""
    pid = next(p for p, name in srv.workers.items() if name == worker)

    async def main():
        async with httpx.AsyncClient(base_url=srv.url, timeout=60) as c:
            async with c.stream("POST", "/v1/completions", json={**LONG, "stream": True}) as r:
                assert r.status_code == 200
                lines = r.aiter_lines()
                await lines.__anext__()  # it is streaming
                # A second request waits in the scheduler behind it (--max-running-requests 1).
                plain = asyncio.create_task(c.post("/v1/completions", json={**LONG, "prompt": "Waiting prompt"}))
                while metrics(srv)["minisgl_waiting_requests"] < 1:
                    await asyncio.sleep(0.05)
                with paused(srv):
                    os.kill(pid, signal.SIGKILL)
                    rest = [line async for line in lines]
                    plain_r = await plain
            after = await c.post("/v1/completions", json={**LONG, "max_tokens": 2})
            return rest, plain_r, after

    rest, plain, after = asyncio.run(main())
    # The stream ends with an error event that names the dead worker.
    events = [json.loads(x[len("data: ") :]) for x in rest if x.startswith("data: {")]
    assert "error" in events[-1], rest[-3:]
    assert worker in events[-1]["error"]["message"]
    # The request that was waiting gets a 503 JSON error naming it.
    assert plain.status_code == 503, plain.text
    assert worker in plain.json()["error"]["message"]
    # A new request, before the server is gone: 503 JSON too.
    assert after.status_code == 503 and after.json()["error"]["type"] == "service_unavailable", after.text
    # The server exits non-zero, names the dead worker, and leaves no process or socket behind.
    assert srv.proc.wait(30) == 1, srv.output()
    assert re.search(rf"error: worker {worker} \(pid {pid}\) died \(killed by SIGKILL\)", srv.output()), srv.output()
    assert_gone(srv.workers)
    assert srv.ipc_dirs() == []


@pytest.mark.timeout(60, func_only=True)
def test_killed_tokenizer_fails_requests_and_the_server_exits(server):
    wait_idle(server)
    kill_worker_during_requests(server, "minisgl-tokenizer-0")


@pytest.mark.timeout(300)
def test_killed_detokenizer_fails_requests_and_the_server_exits(tmp_path, tiny_model_dir):
    srv = tiny_server(tmp_path, tiny_model_dir)
    try:
        srv.wait_ready()
        kill_worker_during_requests(srv, "minisgl-detokenizer-0")
    finally:
        srv.stop()
