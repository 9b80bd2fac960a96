"""The scheduler's own work per decode step at a large batch, measured without a GPU.

    python -m minisgl_edu.bench.host_step                  # 256 running requests, 100 decode steps
    python -m minisgl_edu.bench.host_step --batch 64 --profile

Where this sits on the request path: around the scheduler loop. On a GPU the overlap loop hides
the host's work of a step behind the forward pass of the step before, but only while that work
takes less time than the GPU's. This runs a real `Scheduler` on a tiny random-weight model with
its forward pass (`Engine.launch_batch`) replaced by a stand-in that samples token 7 for every
request at once, so what is timed is the scheduler's part of a step alone: choosing the batch,
reserving pages, adding each new token, the finish checks, the messages to the detokenizer.
The engine's own host work (building a step's inputs, the graph replay's copies) is not in it.
The steps run inside `frozen_heap()`, as the server's scheduler process runs its loop.

It prints milliseconds per decode step and microseconds per request, the median step and the
longest (a step the garbage collector stopped stands out there); `--profile` adds the
functions with the most time of their own (cProfile). Run it on an idle machine: the figures
are host speed, and a shared core halves them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from minisgl_edu.core import Batch, ReqStatus, SamplingParams
from minisgl_edu.engine.engine import ForwardOutput
from minisgl_edu.engine.output import PendingForward
from minisgl_edu.grading.harness import tiny_model
from minisgl_edu.process import frozen_heap
from minisgl_edu.scheduler import Scheduler, SchedulerConfig

PROMPT_LEN = 64


def instant_forward(batch: Batch) -> PendingForward:
    """The stand-in forward pass: token 7 for every item that samples one, no time spent."""
    sampled = [it.completes_prompt for it in batch.items]
    out = ForwardOutput([[7] if s else [] for s in sampled], [[None] if s else [] for s in sampled])
    return PendingForward([], None, ready=out)


def decoding_scheduler(batch: int, steps: int) -> Scheduler:
    """A scheduler with `batch` requests past their prompts, each with room for `steps` more tokens."""
    page_size = 16
    pages_each = (PROMPT_LEN + steps + 2 * page_size) // page_size
    s = Scheduler(
        SchedulerConfig(
            model=tiny_model(),  # the graders' 2-layer random-weight Llama: milliseconds a step
            device="cpu",
            page_size=page_size,
            num_pages=batch * pages_each + 16,
            max_running_requests=batch,
            max_prefill_tokens=batch * PROMPT_LEN,
        )
    )
    s.engine.launch_batch = instant_forward
    params = SamplingParams(max_tokens=steps + 2, ignore_eos=True)
    for uid in range(batch):
        s.add_request(uid, [100 + (uid * 7919 + i * 31) % 40000 for i in range(PROMPT_LEN)], params)
    while any(r.status != ReqStatus.DECODING for r in s.reqs.values()):
        s.step()
    s.io.drain()
    return s


def measure(batch: int, steps: int, profile: bool) -> None:
    s = decoding_scheduler(batch, steps)
    prof = cProfile.Profile() if profile else None
    with frozen_heap():  # as the server's scheduler process runs its loop
        times = []
        if prof:
            prof.enable()
        for _ in range(steps):
            t0 = time.perf_counter()
            record = s.step()
            assert record is not None and record.phase == "decode" and len(record.items) == batch
            s.io.drain()  # as the detokenizer would: the messages do not pile up
            times.append(time.perf_counter() - t0)
        if prof:
            prof.disable()
    assert all(len(r.output_ids) == steps + 1 for r in s.reqs.values())
    seconds = sum(times)
    print(
        f"decode batch {batch}, {steps} steps{' (under cProfile)' if prof else ''}: "
        f"{seconds / steps * 1e3:.2f} ms per step, {seconds / steps / batch * 1e6:.1f} us per request; "
        f"median step {sorted(times)[steps // 2] * 1e3:.2f} ms, longest {max(times) * 1e3:.1f} ms"
    )
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m minisgl_edu.bench.host_step", description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=256, help="running requests (default 256)")
    ap.add_argument("--steps", type=int, default=100, help="decode steps timed (default 100)")
    ap.add_argument("--profile", action="store_true", help="also profile the same steps, top functions by own time")
    args = ap.parse_args(argv)
    measure(args.batch, args.steps, profile=False)
    if args.profile:
        measure(args.batch, args.steps, profile=True)


if __name__ == "__main__":
    main()
