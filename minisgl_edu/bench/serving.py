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
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import httpx

from minisgl_edu.bench.serving_client import (
    BenchConfig,
    BenchResult,
    Clock,
    RequestResult,
    Summary,
    run_benchmark_async,
)
from minisgl_edu.bench.serving_procs import run_in_processes
from minisgl_edu.bench.serving_report import format_table, plot_result, print_table, write_json

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


def run_benchmark(
    config: BenchConfig, clock: Clock = time.perf_counter, transport: Optional[httpx.AsyncBaseTransport] = None
) -> BenchResult:
    """`run_benchmark_async` from synchronous code. A notebook cell already runs inside an event
    loop, where `asyncio.run` refuses to start; there the benchmark gets a loop in a thread."""
    if config.client_processes > 1:
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
