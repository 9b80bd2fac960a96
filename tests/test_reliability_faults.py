"""Reliability under faults: per-request timeouts, and worker processes killed with SIGKILL.

The servers here run the tiny random-weight model (`tiny_model_dir`: same tokenizer, 2 layers),
which starts fast; its text is nonsense, which does not matter here.

* The module's server has `--request-timeout 4` and runs one request at a time, so a second one
  waits: a request that is too slow, running or waiting, is aborted, freed, and gets 504 (an error
  event in a stream). At the end its tokenizer process is killed.
* The detokenizer gets a server of its own. (The scheduler kill is in test_server.py.)

After a kill: the requests in flight get an error at once (503, or an error event in a stream),
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
from test_server import ServerProcess, assert_gone, metrics, parse_sse, wait_idle

pytestmark = pytest.mark.slow

TIMEOUT = 4.0
LONG = {"prompt": "Once upon a time", "max_tokens": 3000, "temperature": 0, "ignore_eos": True}


def tiny_server(tmp_path, model_dir: str, *extra: str) -> ServerProcess:
    return ServerProcess(tmp_path, "--model", model_dir, "--num-pages", "512", "--max-running-requests", "1",
                         *extra)


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
    assert TIMEOUT - 0.5 <= took <= TIMEOUT + 5, took


# ---------------------------------------------------------------- --request-timeout


@pytest.mark.timeout(60, func_only=True)
def test_request_timeout_aborts_and_frees(server):
    wait_idle(server)
    t0 = time.monotonic()
    r = httpx.post(server.url + "/v1/completions", json=LONG, timeout=60)
    assert_timeout_error(r, time.monotonic() - t0)
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
        payloads = parse_sse(r.read().decode())
    took = time.monotonic() - t0
    assert TIMEOUT - 0.5 <= took <= TIMEOUT + 5, took
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
            while metrics(server)["minisgl_running_requests"] < 1:
                await asyncio.sleep(0.05)
            t0 = time.monotonic()
            second = await c.post("/v1/completions", json={**LONG, "prompt": "Another prompt"})
            return await first, second, time.monotonic() - t0

    first, second, took = asyncio.run(main())
    assert first.status_code == 504, first.text
    assert_timeout_error(second, took)
    wait_idle(server)


# ---------------------------------------------------------------- killed workers


def kill_worker_during_requests(srv: ServerProcess, worker: str) -> None:
    """Kill `worker` while a stream and a non-streaming request run, and check the aftermath."""
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
                t0 = time.monotonic()
                os.kill(pid, signal.SIGKILL)
                rest = [line async for line in lines]
                stream_took = time.monotonic() - t0
            plain_r = await plain
            plain_took = time.monotonic() - t0
            after = await c.post("/v1/completions", json={**LONG, "max_tokens": 2})
            return rest, stream_took, plain_r, plain_took, after

    rest, stream_took, plain, plain_took, after = asyncio.run(main())
    # The stream ends with an error event that names the dead worker, within moments.
    events = [json.loads(x[len("data: "):]) for x in rest if x.startswith("data: {")]
    assert "error" in events[-1], rest[-3:]
    assert worker in events[-1]["error"]["message"]
    assert stream_took < 5, stream_took
    # The request that was waiting gets a 503 JSON error naming it.
    assert plain.status_code == 503, plain.text
    assert worker in plain.json()["error"]["message"] and plain_took < 5
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
