"""The online benchmark's report: the printed table, the JSON file and the figure.

Where this sits on the request path: after it. `bench/serving.py` runs the benchmark and hands
its `BenchResult` here; the table follows the layout of SGLang's `bench_serving`, so numbers can
be set beside those of SGLang and vLLM.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Optional

from minisgl_edu.bench.serving_stats import Percentiles, output_tokens_per_bin

if TYPE_CHECKING:
    from minisgl_edu.bench.serving_client import BenchResult

WIDTH = 50


def _title(text: str, fill: str = "-") -> str:
    return f" {text} ".center(WIDTH, fill) if text else fill * WIDTH


def _row(label: str, value: object) -> str:
    if isinstance(value, float):
        value = "inf" if math.isinf(value) else f"{value:.2f}"
    return f"{label + ':':<40} {value}"


def _latency_rows(name: str, p: Optional[Percentiles]) -> list[str]:
    if p is None:
        return [_row(f"{name} (ms)", "n/a")]
    return [
        _row(f"Mean {name} (ms)", p.mean),
        _row(f"Median {name} (ms)", p.p50),
        _row(f"P90 {name} (ms)", p.p90),
        _row(f"P99 {name} (ms)", p.p99),
    ]


def format_table(result: BenchResult) -> str:
    cfg, s = result.config, result.summary
    lines = [
        _title("Serving Benchmark Result", "="),
        _row("Endpoint", f"/v1/{'chat/completions' if cfg.endpoint == 'chat' else 'completions'}"),
        _row("Model", result.model or "(not named)"),
        _row("Traffic request rate", cfg.request_rate),
        _row("Max request concurrency", cfg.concurrency if cfg.concurrency else "not set"),
        _row("Successful requests", s.succeeded),
        _row("Failed requests", s.failed),
        _row("Benchmark duration (s)", s.duration_s),
        _row("Total input tokens", s.input_tokens),
        _row("Total generated tokens", s.output_tokens),
        _row("Cached prompt tokens", "not reported" if s.cached_tokens is None else s.cached_tokens),
        _row("Request throughput (req/s)", s.request_throughput),
        _row("Output token throughput (tok/s)", s.output_throughput),
        _row("Peak output token throughput (tok/s)", s.peak_output_throughput),
        _row("Total token throughput (tok/s)", s.total_throughput),
        # How busy each client process was: near 100%, the client, not the server, set the pace.
        _row(
            f"Client CPU ({cfg.client_processes} process{'es' if cfg.client_processes > 1 else ''}, % of a core each)",
            100 * result.client_cpu_s / (s.duration_s * cfg.client_processes) if s.duration_s else 0.0,
        ),
        _title("End-to-End Latency"),
        *_latency_rows("E2E Latency", s.e2e_ms),
        _title("Time to First Token"),
        *_latency_rows("TTFT", s.ttft_ms),
        _title("Time per Output Token (excl. 1st token)"),
        *_latency_rows("TPOT", s.tpot_ms),
        _title("Inter-token Latency"),
        *_latency_rows("ITL", s.itl_ms),
    ]
    if s.errors:
        lines.append(_title("Errors"))
        lines += [f"{n:>5} x {error}" for error, n in sorted(s.errors.items(), key=lambda e: -e[1])]
    lines.append(_title("", "="))
    return "\n".join(lines)


def print_table(result: BenchResult) -> None:
    print(format_table(result))


def write_json(result: BenchResult, path: str) -> None:
    with open(path, "w") as f:
        # allow_nan=False: the file must be strict JSON for other tools (to_dict writes inf as "inf").
        json.dump(result.to_dict(), f, indent=2, allow_nan=False)


def plot_result(result: BenchResult, path: Optional[str] = None):
    """TTFT and ITL histograms (median and p99 marked) and output tokens/s in 1 s bins.
    Returns the matplotlib Figure (a notebook shows it); with `path`, also saves it there."""
    # A Figure of its own, not pyplot's: no backend or display is needed to save it, and a
    # notebook shows the returned figure once (pyplot would show it a second time).
    from matplotlib.figure import Figure

    good = [r for r in result.requests if r.ok]
    ttft = [r.ttft * 1000 for r in good if r.ttft is not None]
    itl = [x * 1000 for r in good for x in r.itls]
    bins = output_tokens_per_bin(good, result.summary.duration_s)

    fig = Figure(figsize=(15, 4))
    axes = fig.subplots(1, 3)
    for ax, values, p, name in (
        (axes[0], ttft, result.summary.ttft_ms, "TTFT"),
        (axes[1], itl, result.summary.itl_ms, "ITL"),
    ):
        ax.set_title(f"{name} ({len(values)} values)")
        ax.set_xlabel(f"{name} (ms)")
        ax.set_ylabel("count")
        if values:
            ax.hist(values, bins=min(50, max(5, len(values) // 2)), color="tab:blue", alpha=0.8)
            ax.axvline(p.p50, color="tab:green", linestyle="--", label=f"p50 {p.p50:.1f} ms")
            ax.axvline(p.p99, color="tab:red", linestyle="--", label=f"p99 {p.p99:.1f} ms")
            ax.legend()
    axes[2].bar(range(len(bins)), bins, width=1.0, align="edge", color="tab:orange")
    axes[2].set_title("output tokens/s (1 s bins)")
    axes[2].set_xlabel("seconds since start")
    axes[2].set_ylabel("tokens/s")
    fig.suptitle(f"{result.model or ''} /v1/{result.config.endpoint}: {result.summary.succeeded} requests")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
