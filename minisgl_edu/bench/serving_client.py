"""The serving benchmark's client: one request streamed and timed, and a whole run of them.

Where this sits on the request path: outside it, as the client. `serving.py` (the command line
and `run_benchmark`) and `serving_procs.py` (the same client in several processes) both run
`run_benchmark_async` here; `serving_report.py` prints the `BenchResult` it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional

import httpx

from minisgl_edu.bench.serving_stats import RequestResult, Summary, summarize
from minisgl_edu.bench.workload import PlannedRequest, make_workload

DEFAULT_BASE_URL = "http://127.0.0.1:1919"  # where `python -m minisgl_edu.serve` listens
Clock = Callable[[], float]


@dataclass
class BenchConfig:
    base_url: str = DEFAULT_BASE_URL
    endpoint: str = "completions"  # "completions" (token-id prompts) or "chat"
    prompt_set: str = "questions"  # chat: "questions", or "edits" (texts handed back with a small change)
    model: Optional[str] = None  # None: the first id that GET /v1/models lists
    api_key: Optional[str] = None  # sent as "Authorization: Bearer <key>"
    num_prompts: int = 16  # distinct prompts; requests = num_prompts * repeat_prompts
    input_len: Optional[int] = None  # see workload.py (completions: 128 ids; chat: one question)
    output_len: int = 32  # max_tokens
    concurrency: Optional[int] = None  # requests in flight at most; None: no cap
    request_rate: float = math.inf  # Poisson arrivals per second; inf: all at the start
    repeat_prompts: int = 1
    ignore_eos: bool = False  # ask the server to run to max_tokens (SGLang, vLLM, llama.cpp accept it)
    seed: int = 0
    timeout_s: float = 600.0  # a request fails when the server sends nothing for this long
    progress: bool = True  # a tqdm bar on stderr
    # Client processes that share the requests (`serving_procs.py`): one parses every chunk of
    # every stream in Python, and at tens of thousands of chunks a second that, not the server, is
    # what the figures would show (the table's "Client CPU" row says how busy each process was).
    client_processes: int = 1

    def __post_init__(self) -> None:
        if self.endpoint not in ("completions", "chat"):
            raise ValueError(f"endpoint must be 'completions' or 'chat', got {self.endpoint!r}")
        if self.prompt_set not in ("questions", "edits"):
            raise ValueError(f"prompt_set must be 'questions' or 'edits', got {self.prompt_set!r}")
        for name in ("num_prompts", "output_len", "repeat_prompts"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be >= 1 (or None for no cap)")
        if self.input_len is not None and self.input_len < 1:
            raise ValueError("input_len must be >= 1")
        if not self.request_rate > 0:
            raise ValueError("request_rate must be > 0 (inf: all at once)")
        if self.client_processes < 1 or (self.concurrency is not None and self.concurrency < self.client_processes):
            raise ValueError("client_processes must be >= 1 and at most the concurrency")

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self.endpoint == "chat" else "/v1/completions"


@dataclass
class BenchResult:
    config: BenchConfig
    model: Optional[str]  # the model named in the requests
    requests: list[RequestResult]
    summary: Summary
    server_error: Optional[str] = None  # the server could not be reached: nothing was sent
    client_cpu_s: float = 0.0  # CPU seconds the client's processes used while the requests ran

    def to_dict(self) -> dict:
        config = asdict(self.config)
        config.pop("api_key")  # a secret has no place in a results file
        if math.isinf(config["request_rate"]):
            config["request_rate"] = "inf"
        return {
            "config": config,
            "model": self.model,
            "server_error": self.server_error,
            "summary": asdict(self.summary),
            "client_cpu_s": self.client_cpu_s,
            "requests": [r.to_dict() for r in self.requests],
        }


# ---------------------------------------------------------------- one request


def request_body(config: BenchConfig, model: Optional[str], planned: PlannedRequest) -> dict:
    body: dict = {
        "max_tokens": config.output_len,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if model is not None:
        body["model"] = model
    if config.ignore_eos:
        body["ignore_eos"] = True
    if config.endpoint == "chat":
        body["messages"] = [{"role": "user", "content": planned.prompt}]
    else:
        body["prompt"] = planned.prompt
    return body


def chunk_text(chunk: dict, chat: bool) -> str:
    """The output text a stream chunk carries ("" for the role chunk, the finish chunk, usage)."""
    choices = chunk.get("choices") or []
    if not choices:
        return ""
    if chat:
        delta = choices[0].get("delta") or {}
        # Reasoning models stream their thinking in a field of its own: those are output tokens too.
        return (delta.get("content") or "") + (delta.get("reasoning_content") or "")
    return choices[0].get("text") or ""


def error_message(status: int, body: bytes) -> str:
    """ "HTTP 429: <message>" from an OpenAI-style error body, or from whatever text came."""
    try:
        data = json.loads(body)
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            message = err.get("message") or err.get("detail") or json.dumps(err)
        else:
            message = str(err)
    except ValueError:
        message = body.decode("utf-8", "replace").strip()[:200] or "(empty body)"
    return f"HTTP {status}: {message}"


async def send_request(
    client: httpx.AsyncClient,
    config: BenchConfig,
    model: Optional[str],
    planned: PlannedRequest,
    clock: Clock,
    start: float,
) -> RequestResult:
    """Send one request, stream its reply, and record what happened; never raises."""
    rec = RequestResult(planned.index, planned.prompt_index, planned.round, planned.arrival)
    chat = config.endpoint == "chat"
    pieces: list[str] = []
    headers_seen = False
    done = False
    rec.sent_at = clock() - start
    try:
        async with client.stream("POST", config.path, json=request_body(config, model, planned)) as resp:
            headers_seen = True
            rec.http_status = resp.status_code
            if resp.status_code != 200:
                rec.error = error_message(resp.status_code, await resp.aread())
                return rec
            async for line in resp.aiter_lines():
                # Read the clock first: what is measured is when the chunk arrived, not parsed.
                now = clock() - start
                if not line.startswith("data:"):
                    continue  # blank separators, SSE comments
                data = line[len("data:") :].strip()
                if data == "[DONE]":
                    done = True
                    break
                chunk = json.loads(data)
                if "error" in chunk:  # an error after the stream began (our server, vLLM)
                    err = chunk["error"]
                    rec.error = f"error in stream: {err.get('message') if isinstance(err, dict) else err}"
                    return rec
                text = chunk_text(chunk, chat)
                if text:
                    rec.chunk_times.append(now)
                    pieces.append(text)
                usage = chunk.get("usage")
                if usage:
                    rec.prompt_tokens = usage.get("prompt_tokens")
                    rec.completion_tokens = usage.get("completion_tokens")
                    rec.cached_tokens = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if not done:
            rec.error = "stream ended without [DONE]"
    except httpx.ConnectError as e:
        rec.error = f"cannot connect: {e}"
    except httpx.TimeoutException as e:
        rec.error = f"timeout: nothing for {config.timeout_s:g} s ({type(e).__name__})"
    except httpx.HTTPError as e:  # the connection broke: a server that crashed or cut the stream
        where = "stream cut before [DONE]" if headers_seen else "connection failed"
        rec.error = f"{where}: {type(e).__name__}: {e}"
    except Exception as e:  # one odd reply (bad JSON, odd shapes) must not end the run
        rec.error = f"bad reply: {type(e).__name__}: {e}"
    finally:
        rec.done_at = clock() - start
        rec.text = "".join(pieces)
    return rec


# ---------------------------------------------------------------- the run


async def probe_model(client: httpx.AsyncClient) -> tuple[Optional[str], Optional[str]]:
    """(first model id of GET /v1/models, None), or (None, why the server cannot be reached).

    Any other failure (no such route, 401) leaves the name unknown and lets the requests report
    their own errors."""
    try:
        resp = await client.get("/v1/models")
    except (httpx.ConnectError, httpx.ConnectTimeout) as e:
        return None, f"cannot connect to {client.base_url}: {e}"
    except httpx.HTTPError:
        return None, None
    try:
        return resp.json()["data"][0]["id"], None
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None


async def run_benchmark_async(
    config: BenchConfig,
    clock: Clock = time.perf_counter,
    transport: Optional[httpx.AsyncBaseTransport] = None,
    part: tuple[int, int] = (0, 1),
    ready: Optional[Callable[[], float]] = None,
) -> BenchResult:
    """Run the benchmark in the current event loop. `transport` replaces the network (tests).

    With several client processes (`serving_procs.py`), process k of n sends requests k, k + n,
    ... of the plan (`part`), and `ready()`, called once the server answered, blocks until every
    process is ready and returns the `clock()` value they all count from."""
    plan = make_workload(
        config.endpoint,
        config.num_prompts,
        config.input_len,
        config.repeat_prompts,
        config.request_rate,
        config.seed,
        config.prompt_set,
    )[part[0] :: part[1]]
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    # No pool limit: the concurrency is ours to set, and a queue inside httpx would count as server time.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(
        base_url=config.base_url, headers=headers, timeout=config.timeout_s, limits=limits, transport=transport
    ) as client:
        found, unreachable = await probe_model(client)
        model = config.model or found
        if unreachable is not None:
            reqs = [RequestResult(p.index, p.prompt_index, p.round, p.arrival, error=unreachable) for p in plan]
            return BenchResult(config, model, reqs, summarize(reqs, 0.0), server_error=unreachable)

        from tqdm import tqdm

        bar = tqdm(total=len(plan), desc="requests", unit="req", file=sys.stderr, disable=not config.progress)
        slots = asyncio.Semaphore(config.concurrency) if config.concurrency else contextlib.nullcontext()
        start = clock() if ready is None else ready()  # (several processes) maybe a moment ahead
        cpu = time.process_time()

        async def one(planned: PlannedRequest) -> RequestResult:
            wait = planned.arrival - (clock() - start)
            if wait > 0:
                await asyncio.sleep(wait)
            async with slots:
                rec = await send_request(client, config, model, planned, clock, start)
            bar.update(1)
            return rec

        try:
            reqs = list(await asyncio.gather(*(one(p) for p in plan)))
        finally:
            bar.close()
        duration = clock() - start
    return BenchResult(config, model, reqs, summarize(reqs, duration), client_cpu_s=time.process_time() - cpu)
