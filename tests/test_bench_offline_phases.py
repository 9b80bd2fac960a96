"""bench/offline_phases.py: how a run's batches are cut into phases, host gaps and floors.

The GPU part (CUDA events around every batch) runs on the H200 only; here the events are stand-ins
with known times, so the arithmetic of the table is checked exactly.
"""

from __future__ import annotations

from minisgl_edu.bench.offline_phases import ModelCost, StepTiming, breakdown, phase_of


class At:
    """A stand-in for a recorded torch.cuda.Event, at `t` seconds."""

    def __init__(self, t: float) -> None:
        self.t = t

    def elapsed_time(self, other: "At") -> float:
        return (other.t - self.t) * 1e3  # milliseconds, as CUDA events give it


def step(phase: str, size: int, start: float, end: float, tokens: int = 0, kv: int = 0) -> StepTiming:
    return StepTiming(phase, size, tokens or size, size if phase == "decode" else 0, kv, At(start), At(end))


COST = ModelCost(weight_bytes=1000, matmul_params=10, lm_head_params=5, kv_bytes_per_token=100, attn_flops_per_pair=4)


def test_batches_fall_into_their_phase_and_the_idle_gpu_is_the_host_gaps():
    steps = [
        step("prefill", 4, 0.10, 0.30, tokens=2000, kv=2000),
        step("mixed", 5, 0.30, 0.40, tokens=900, kv=3000),
        step("decode", 200, 0.45, 0.50),  # 0.05 s idle before it
        step("decode", 10, 0.50, 0.52),
        step("decode", 10, 0.60, 0.61),  # 0.08 s idle before it
    ]
    rows = {r["phase"]: r for r in breakdown(steps, wall_s=1.0, t0=At(0.0), t1=At(0.70), cost=COST)}
    assert rows["prefill steps"]["steps"] == 2 and abs(rows["prefill steps"]["seconds"] - 0.30) < 1e-9
    assert rows["decode, batch 193-256"]["steps"] == 1
    assert rows["decode, batch 1-16"]["steps"] == 2 and abs(rows["decode, batch 1-16"]["seconds"] - 0.03) < 1e-9
    # idle: 0.10 before the first batch, 0.05 and 0.08 between, 0.09 after the last one
    assert abs(rows["host gaps (GPU idle)"]["seconds"] - 0.32) < 1e-9
    assert rows["total (wall)"]["steps"] == 5 and rows["total (wall)"]["share"] == 1.0
    assert (
        abs(rows["total (wall)"]["floor_s"] - sum(r["floor_s"] for k, r in rows.items() if k != "total (wall)")) < 1e-12
    )


def test_a_step_s_floor_is_its_bytes_plus_its_flops():
    s = step("decode", 2, 0.0, 1.0, kv=30)  # 2 tokens, 2 sampled rows, 30 context tokens read
    read = 1000 + 30 * 100
    work = 2 * 10 * 2 + 2 * 5 * 2 + 4 * 30
    assert COST.floor_s(s, bandwidth=1e3, flops=1e2) == read / 1e3 + work / 1e2
    assert phase_of(step("decode", 16, 0, 1)) == "decode, batch 1-16"
    assert phase_of(step("decode", 17, 0, 1)) == "decode, batch 17-64"
