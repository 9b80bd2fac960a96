"""The serving benchmark's client spread over several processes (`--client-processes N`).

Where this sits on the request path: outside it, as the client, like `serving.py`. One Python
process parses every SSE chunk of every stream (httpx, then `json.loads`): on the course CPU that
is ~140 µs of its CPU per streamed token, so near 7,000 tokens a second one process is busy all
the time and its event loop reads each stream late, several chunks at once. The figures then
describe the client. Here process k of N sends requests k, k + N, ... of the same seeded plan,
with 1/N of the concurrency, and the parent joins their records into one result.

They count time from one start: each process connects and asks the server its model, says
"ready", and waits; the parent then sends them all the same `time.perf_counter()` value, a system
clock that every process reads alike (CLOCK_MONOTONIC on Linux), so arrivals, chunk times and
TTFTs from different processes are on one axis.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import time
from typing import Any

from minisgl_edu.bench.serving_client import BenchConfig, BenchResult, probe_model, run_benchmark_async
from minisgl_edu.bench.serving_stats import summarize

START_LEAD_S = 0.01  # how far ahead of "all ready" the common start is set


def run_in_processes(config: BenchConfig) -> BenchResult:
    """`run_benchmark` with `config.client_processes` processes sharing the requests."""
    n = config.client_processes
    unreachable = _unreachable(config)
    if unreachable is not None:  # what one process would report: every request failed, nothing sent
        one = dataclasses.replace(config, client_processes=1, progress=False)
        return asyncio.run(run_benchmark_async(one))
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no copy of the caller's loop or threads
    pipes, procs = [], []
    for k in range(n):
        share = None if config.concurrency is None else config.concurrency // n + (k < config.concurrency % n)
        part_config = dataclasses.replace(config, concurrency=share, client_processes=1, progress=False)
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_client, args=(part_config, (k, n), child), daemon=True)
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    try:
        first = [conn.recv() for conn in pipes]  # "ready", or a result already (the server went away)
        start = time.perf_counter() + START_LEAD_S
        for conn, msg in zip(pipes, first):
            if msg == "ready":
                conn.send(start)
        parts = [conn.recv() if msg == "ready" else msg for conn, msg in zip(pipes, first)]
    finally:
        for proc in procs:
            proc.join(timeout=5)
    reqs = sorted((r for p in parts for r in p.requests), key=lambda r: r.index)
    duration = max((r.done_at for r in reqs if r.done_at is not None), default=0.0)
    model = next((p.model for p in parts if p.model is not None), None)
    cpu = sum(p.client_cpu_s for p in parts)
    return BenchResult(config, model, reqs, summarize(reqs, duration), client_cpu_s=cpu)


def _unreachable(config: BenchConfig) -> Any:
    import httpx

    async def probe():
        async with httpx.AsyncClient(base_url=config.base_url, timeout=config.timeout_s) as client:
            return (await probe_model(client))[1]

    return asyncio.run(probe())


def _client(config: BenchConfig, part: tuple[int, int], conn: Any) -> None:
    """One client process: its share of the plan, from the common start; its result to the parent."""

    def ready() -> float:
        conn.send("ready")
        return conn.recv()

    result = asyncio.run(run_benchmark_async(config, part=part, ready=ready))
    conn.send(result)
