"""How often does Python's garbage collector stop the scheduler's loop at decode batch 256?

    python scripts/gc_in_loop.py [--steps 3000] [--keep] [--freeze]

Runs `bench.host_step`'s scheduler (the graders' tiny model, its forward pass a stand-in that
samples at once, 256 requests decoding) for STEPS decode steps after one full collection, and
counts the collections of each generation (a `gc.callbacks` hook), the time of the full ones and
the longest step. By default each step's messages are taken away at once and its record dropped,
as in the server, whose scheduler sends its messages to the detokenizer every step. `--keep`
keeps both until the end, as the offline benchmark's harness does (`bench.offline.run_engine`
drains the messages after the run, and `run_until_idle` returns every step's record). `--freeze`
runs the steps inside `frozen_heap()`, as the server's processes run their loops.

Objects the loop makes and frees within a step do not make collections by themselves; young
collections come when many are alive at once (a batch's messages), and a full one when enough
objects have survived two young collections, counted since the last full one (CPython's rule:
a quarter of the objects the last full collection kept).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import time

from minisgl_edu.bench.host_step import decoding_scheduler
from minisgl_edu.server.process import frozen_heap


class Collections:
    """A `gc.callbacks` hook that writes down (generation, start, end) of every collection."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, float, float]] = []
        self._started: float | None = None

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.runs.append((info["generation"], self._started, time.perf_counter()))
            self._started = None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--freeze", action="store_true")
    args = ap.parse_args()

    sched = decoding_scheduler(256, args.steps + 1)
    collections = Collections()
    kept = []
    longest = 0.0
    gc.collect()
    with frozen_heap() if args.freeze else contextlib.nullcontext():
        gc.callbacks.append(collections)
        for _ in range(args.steps):
            t0 = time.perf_counter()
            record = sched.step()
            if args.keep:
                kept.append(record)
            else:
                sched.io.drain()
            longest = max(longest, time.perf_counter() - t0)
        gc.callbacks.remove(collections)
    full = [end - start for generation, start, end in collections.runs if generation == 2]
    young = [end - start for generation, start, end in collections.runs if generation < 2]
    how = "kept" if args.keep else "taken each step"
    print(
        f"{args.steps} steps at batch 256, messages and records {how}{', heap frozen' if args.freeze else ''}: "
        f"{len(young)} young collections ({sum(young) * 1e3:.0f} ms), {len(full)} full ones "
        f"({sum(full) * 1e3:.0f} ms, the longest {max(full, default=0) * 1e3:.0f} ms); "
        f"longest step {longest * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
