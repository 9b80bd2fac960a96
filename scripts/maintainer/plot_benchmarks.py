"""Draw docs/images/throughput_h200.png from the H200 figures in docs/benchmarks.md.

The figures are copied here by hand from that file's ablation table (offline preset qwen3-0.6b,
one H200, one call, 2026-12-01) and its transformers figure (2026-11-30); when they are measured
again, update both.

    .venv/bin/python scripts/maintainer/plot_benchmarks.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RUNS = [  # (label, output tok/s)
    ("all on", 22292),
    ("CUDA-core decode kernel", 20895),
    ("prefill budget 2,048", 21943),
    ("no Triton kernels", 21686),
    ("no fused layers", 15990),
    ("no overlap", 15108),
    ("no CUDA graphs", 11504),
    ("torch attention", 3973),
    ("transformers\ngenerate*", 750),  # 749.8, measured 2026-11-30 in the benchmark's process
]


def main() -> None:
    fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=120)
    labels, values = zip(*RUNS)
    bars = ax.barh(labels[::-1], values[::-1], color=["#999999"] + ["#4C72B0"] * (len(RUNS) - 1))
    for bar, v in zip(bars, values[::-1]):
        ax.text(v + 200, bar.get_y() + bar.get_height() / 2, f"{v:,}", va="center", fontsize=8)
    ax.set_xlabel("output tokens / s (256 requests, in/out 100..1024, Qwen3-0.6B shape, bf16)")
    ax.set_title("Offline throughput on one H200, each line one switch off  (* the day before)", fontsize=9)
    ax.set_xlim(0, max(values) * 1.15)
    fig.tight_layout()
    out = Path(__file__).resolve().parents[2] / "docs" / "images" / "throughput_h200.png"
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main()
