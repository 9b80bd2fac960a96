"""Online serving benchmark: drive an OpenAI-compatible server and measure what its users see.

    python -m minisgl_edu.serve &                                   # our server, port 1919
    python -m minisgl_edu.bench.serving --num-prompts 16 --concurrency 4 --output-len 32
    python -m minisgl_edu.bench.serving --request-rate 2 --num-prompts 40 --json run.json --plot run.png
    python -m minisgl_edu.bench.serving --endpoint chat --input-len 200 --repeat-prompts 2
    python -m minisgl_edu.bench.serving --endpoint chat --prompt-set edits --concurrency 1   # speculative
    python -m minisgl_edu.bench.serving --base-url http://127.0.0.1:8080 --ignore-eos   # llama-server

Where this sits on the request path: outside it, as the client. Each request is a streaming
POST to /v1/completions (random token-id prompts) or /v1/chat/completions (questions from
`chat_prompts.py`), greedy (`temperature: 0`), `max_tokens` = `--output-len`, with
`stream_options.include_usage` so that the server's own token counts (and its prefix-cache hits,
`prompt_tokens_details.cached_tokens`, where it reports them) come back in the last chunk.

Traffic: `--concurrency N` keeps N requests in flight (a new one starts as one finishes);
`--request-rate R` sends them as a Poisson process of R requests/s (seeded: the same schedule on
every run); both together cap a Poisson stream at N in flight; neither sends all at once.
`--repeat-prompts K` sends the same prompts K times over, so later rounds hit a warm cache.
`--client-processes N` spreads the requests over N client processes (`serving_procs.py`): one
process parses every chunk of every stream, and at many thousands of chunks a second it, not the
server, sets the pace; the table's "Client CPU" row says how busy each process was.

What is measured, per request (`serving_stats.RequestResult`): the time it was sent, the arrival
of every chunk that carries text, the end of the stream, usage, or the error (HTTP status and
message, connection refused, timeout, a stream that ended without `data: [DONE]`). A failing
request is counted and reported, never raised; a server that cannot be reached at all gives one
error line and exit status 1. The report (`serving_report.py`): TTFT, ITL, TPOT and end-to-end
latency percentiles, request and token throughput, a table as SGLang's `bench_serving` prints.

From Python (a notebook too: inside a running event loop the benchmark runs in a thread):

    from minisgl_edu.bench.serving import BenchConfig, run_benchmark, print_table, plot_result
    result = run_benchmark(BenchConfig(base_url="http://127.0.0.1:1919", concurrency=4, num_prompts=16))
    print_table(result); plot_result(result)
    [r.ttft for r in result.requests]

The client reads time only through its `clock` argument (`time.perf_counter` by default), so a
test can drive it with a fake server and a fake clock and know every latency in advance.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Callable, Optional

import httpx

from minisgl_edu.bench.serving_report import format_table, plot_result, print_table, write_json
from minisgl_edu.bench.serving_stats import RequestResult, Summary, summarize
from minisgl_edu.bench.workload import PlannedRequest, make_workload

__all__ = [
    "BenchConfig",
    "BenchResult",
    "RequestResult",
    "Summary",
    "format_table",
    "main",
    "plot_result",
    "print_table",
    "run_benchmark",
    "run_benchmark_async",
]

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


def run_benchmark(
    config: BenchConfig, clock: Clock = time.perf_counter, transport: Optional[httpx.AsyncBaseTransport] = None
) -> BenchResult:
    """`run_benchmark_async` from synchronous code. A notebook cell already runs inside an event
    loop, where `asyncio.run` refuses to start; there the benchmark gets a loop in a thread."""
    if config.client_processes > 1:
        from minisgl_edu.bench.serving_procs import run_in_processes

        if transport is not None or clock is not time.perf_counter:
            raise ValueError("several client processes count time with the system's clock and use the network")
        return run_in_processes(config)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_benchmark_async(config, clock, transport))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run_benchmark_async(config, clock, transport)).result()


# ---------------------------------------------------------------- command line


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    from minisgl_edu import env

    d = BenchConfig()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", default=d.base_url, help=f"the server (default {d.base_url})")
    ap.add_argument("--endpoint", choices=["completions", "chat"], default=d.endpoint)
    ap.add_argument("--model", help="model name to send (default: the first id of GET /v1/models)")
    ap.add_argument("--api-key", default=env.get().api_key, help="Bearer key (default: $MINISGL_API_KEY)")
    ap.add_argument("--num-prompts", type=int, default=d.num_prompts)
    ap.add_argument(
        "--input-len",
        type=int,
        help="prompt tokens: exactly this many random ids (completions, default 128), or about this many "
        "(chat: questions joined; default one question). The report counts the server's prompt_tokens",
    )
    ap.add_argument(
        "--prompt-set",
        choices=["questions", "edits"],
        default=d.prompt_set,
        help="chat prompts: questions (default), or edits: a text or code to repeat with a small change "
        "(the workload where speculative decoding's drafts pay)",
    )
    ap.add_argument("--output-len", type=int, default=d.output_len, help="max_tokens of every request")
    ap.add_argument("--concurrency", type=int, help="requests in flight at most (default: no cap)")
    ap.add_argument("--request-rate", type=float, default=d.request_rate, help="Poisson arrivals/s (default inf)")
    ap.add_argument("--repeat-prompts", type=int, default=d.repeat_prompts, help="send the prompt set this many times")
    ap.add_argument(
        "--ignore-eos", action="store_true", help="send ignore_eos: true (every request runs to max_tokens)"
    )
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--timeout", type=float, default=d.timeout_s, help="seconds without a byte before a request fails")
    ap.add_argument(
        "--client-processes",
        type=int,
        default=d.client_processes,
        help="client processes sharing the requests (default 1); more where one is busy all the time "
        "(the table's Client CPU row near 100%%): it then limits the figures, not the server",
    )
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--json", help="write every request's record and the summary here")
    ap.add_argument("--plot", help="write a figure here (TTFT and ITL histograms, output tokens/s over time)")
    return ap.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        config = BenchConfig(
            base_url=args.base_url,
            endpoint=args.endpoint,
            prompt_set=args.prompt_set,
            model=args.model,
            api_key=args.api_key,
            num_prompts=args.num_prompts,
            input_len=args.input_len,
            output_len=args.output_len,
            concurrency=args.concurrency,
            request_rate=args.request_rate,
            repeat_prompts=args.repeat_prompts,
            ignore_eos=args.ignore_eos,
            seed=args.seed,
            timeout_s=args.timeout,
            progress=not args.no_progress,
            client_processes=args.client_processes,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result = run_benchmark(config)
    if args.json:
        write_json(result, args.json)
    if result.server_error is not None:
        print(f"error: {result.server_error} (is the server running?)", file=sys.stderr)
        return 1
    print_table(result)
    if args.plot:
        plot_result(result, args.plot)
    return 0 if result.summary.succeeded > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
