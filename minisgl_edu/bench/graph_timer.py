"""GPU time of a sequence of kernel launches replayed as one CUDA graph (CUDA only; for the
maintainer's tools).

Where this sits: not on the request path. `scripts/maintainer/gpu_kernel_bench.py` times single
kernels the way a decode step runs them: captured in a graph, launched back to back, so that
neither Python nor the launch API is in the figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def graph_us(fns: Sequence[Callable[[], object]], replays: int = 10) -> float:
    """GPU microseconds per call of the callables in `fns`, all captured in order in one graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for fn in fns[:3]:  # warm up outside the capture: compile, allocate, pick kernels
            fn()
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for fn in fns:
                fn()
        g.replay()
        s.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(s)
        for _ in range(replays):
            g.replay()
        b.record(s)
        b.synchronize()
    return a.elapsed_time(b) * 1e3 / (len(fns) * replays)
