r"""Speculative decoding at one stream: drafts off and on, and llama.cpp's server beside it.

    python -m minisgl_edu.bench.speculative                       # ours, drafts off and on
    python -m minisgl_edu.bench.speculative --llama-server /path/to/llama-server --json spec.json

Where this sits on the request path: outside it, as the client (`bench/serving.py`). Each server
is started alone in turn (`bench/peer.py` `running`), so that it has the machine's cores to itself:

1. `python -m minisgl_edu.serve` with its defaults (drafts off);
2. the same with `--speculative-algorithm ngram` (`--ours-args` adds flags to both);
3. with `--llama-server`: llama.cpp's server on the same GGUF file, plain, then with its own n-gram
   drafts (`--spec-type ngram-simple`, lookup and draft lengths as ours: `--llama-spec-args`).

Against each, one request at a time (one stream: where a laptop and a live demo spend their
time), two workloads of the serving benchmark's chat prompts: `edits` (a text or code handed back
with a small change: most of the answer is in the prompt) and `questions` (ordinary chat, where
drafts are rarely right). Greedy, up to `--output-len` tokens, stopping at EOS: both servers answer
as a user sees it. The figure is output tokens per second over the whole run; the table has one row
per (server, workload) and, for each server with drafts, its speed-up over the same server without.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass
from typing import Optional

from minisgl_edu.bench.peer import cpu_name, find_llama_server, free_port, gguf_path, running
from minisgl_edu.bench.serving import BenchConfig, run_benchmark

WORKLOADS = ("edits", "questions")
# llama.cpp's n-gram drafts with our lengths: look up the last 3 tokens (ours: 4 down to 2), draft 4.
LLAMA_SPEC_ARGS = ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", "4"]


@dataclass
class SpecRow:
    server: str  # e.g. "minisgl_edu", "minisgl_edu ngram", "llama.cpp", "llama.cpp ngram-simple"
    workload: str  # "edits" | "questions"
    requests: int
    failed: int
    output_tokens: int
    output_tok_s: float
    tpot_p50_ms: Optional[float]


def measure(server: str, base_url: str, args: argparse.Namespace) -> list[SpecRow]:
    common = dict(base_url=base_url, endpoint="chat", output_len=args.output_len, concurrency=1, progress=False)
    # One short request first: every server does one-time work on its first batch.
    run_benchmark(BenchConfig(**{**common, "output_len": 4}, num_prompts=1, seed=999_999))
    rows = []
    for workload in WORKLOADS:
        config = BenchConfig(**common, prompt_set=workload, num_prompts=args.num_prompts, seed=args.seed)
        s = run_benchmark(config).summary
        tpot = None if s.tpot_ms is None else s.tpot_ms.p50
        rows.append(SpecRow(server, workload, s.num_requests, s.failed, s.output_tokens, s.output_throughput, tpot))
        print(format_row(rows[-1], None), file=sys.stderr, flush=True)
    return rows


def speedups(rows: list[SpecRow]) -> dict[tuple[str, str], float]:
    """(server, workload) -> its tok/s over the same server's without drafts (the first word of
    the server's name is the server; a row whose name has no second word is the one without)."""
    plain = {(r.server, r.workload): r.output_tok_s for r in rows if " " not in r.server}
    return {
        (r.server, r.workload): r.output_tok_s / plain[(r.server.split()[0], r.workload)]
        for r in rows
        if " " in r.server and (r.server.split()[0], r.workload) in plain
    }


HEADER = "| server | workload | requests | output tokens | output tok/s | TPOT p50 ms | x drafts off |"


def format_row(r: SpecRow, speedup: Optional[float]) -> str:
    failed = f" ({r.failed} failed)" if r.failed else ""
    tpot = "-" if r.tpot_p50_ms is None else f"{r.tpot_p50_ms:.1f}"
    x = "" if speedup is None else f"{speedup:.2f}"
    return f"| {r.server} | {r.workload} | {r.requests}{failed} | {r.output_tokens} | {r.output_tok_s:.1f} | {tpot} | {x} |"


def format_table(rows: list[SpecRow]) -> str:
    x = speedups(rows)
    sep = "|" + "---|" * (HEADER.count("|") - 1)
    return "\n".join([HEADER, sep, *(format_row(r, x.get((r.server, r.workload))) for r in rows)])


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m minisgl_edu.bench.speculative",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--llama-server", help="also run llama.cpp's llama-server (how to build it: bench.peer --help)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="llama.cpp's threads")
    ap.add_argument("--num-prompts", type=int, default=8, help="requests per workload, one after the other")
    ap.add_argument("--output-len", type=int, default=256, help="max_tokens (answers stop at EOS before)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ours-args", nargs=argparse.REMAINDER, default=[], help="passed on to minisgl_edu.serve")
    ap.add_argument("--llama-spec-args", nargs="+", default=LLAMA_SPEC_ARGS, help="llama.cpp's draft flags")
    ap.add_argument("--json", help="write the rows and the machine here")
    return ap.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    servers = [
        ("minisgl_edu", [sys.executable, "-m", "minisgl_edu.serve", *args.ours_args]),
        (
            "minisgl_edu ngram",
            [sys.executable, "-m", "minisgl_edu.serve", *args.ours_args, "--speculative-algorithm", "ngram"],
        ),
    ]
    if args.llama_server:
        binary = find_llama_server(args.llama_server)
        # One slot: one stream. Its context holds the longest request.
        llama = [binary, "-m", gguf_path(), "--host", "127.0.0.1", "--threads", str(args.threads)]
        llama += ["--threads-batch", str(args.threads), "--parallel", "1", "--ctx-size", "2048"]
        servers += [("llama.cpp", llama), ("llama.cpp " + args.llama_spec_args[1], llama + args.llama_spec_args)]
    rows: list[SpecRow] = []
    with tempfile.TemporaryDirectory(prefix="minisgl-spec-") as logs:
        for name, cmd in servers:
            port = free_port()
            with running(name.replace(" ", "-"), [*cmd, "--port", str(port)], port, logs) as base:
                rows += measure(name, base, args)
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    print(f"\nmachine: {machine}; one stream, greedy, up to {args.output_len} tokens, {args.num_prompts} requests each")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "args": vars(args), "rows": [asdict(r) for r in rows]}, f, indent=1)
    return 1 if any(r.failed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
