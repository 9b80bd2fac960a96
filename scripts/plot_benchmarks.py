"""Draw docs/images/throughput_h200.png from the H200 figures in docs/benchmarks.md.

The figures are copied here by hand from that file's tables (offline preset qwen3-0.6b, one
H200, 2026-11-29); when they are measured again, update both.

    .venv/bin/python scripts/plot_benchmarks.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RUNS = [  # (label, output tok/s)
    ("all on\n(Triton kernels)", 18554),  # mean of the two "rope,gemm" runs, one machine
    ("Triton kernels off", 17403),  # same machine, alternated with the line above
    ("fused off\u2020", 13848),
    ("no overlap*", 9814),
    ("no CUDA graphs*", 6092),
    ("torch attention*", 1318),
    ("transformers\ngenerate", 726),
]


def main() -> None:
    fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=120)
    labels, values = zip(*RUNS)
    bars = ax.barh(labels[::-1], values[::-1], color=["#999999"] + ["#4C72B0"] * (len(RUNS) - 1))
    for bar, v in zip(bars, values[::-1]):
        ax.text(v + 200, bar.get_y() + bar.get_height() / 2, f"{v:,}", va="center", fontsize=8)
    ax.set_xlabel("output tokens / s (256 requests, in/out 100..1024, Qwen3-0.6B shape, bf16)")
    ax.set_title("Offline throughput on one H200  (* before the fused kernels, \u2020 before the Triton ones)",
                 fontsize=9)
    ax.set_xlim(0, max(values) * 1.15)
    fig.tight_layout()
    out = Path(__file__).resolve().parents[1] / "docs" / "images" / "throughput_h200.png"
    fig.savefig(out)
    print(out)


if __name__ == "__main__":
    main()
