"""Pull a layer's weights into the GPU's L2 cache ahead of its matmuls (CUDA graphs of small batches).

Where this sits on the request path: inside `DecoderModel.forward`, while a decode batch of at most
16 tokens is captured into a CUDA graph (`engine/cuda_graph.py`). At the start of every layer it
adds, on a side stream, one prefetch kernel for the weights the layer will read after attention
(o_proj, gate_up_proj, down_proj) and the next layer's qkv_proj. Replays then run that kernel
beside the main chain at no host cost.

Why: at batch 1 a layer is ~10 small kernels in a row, and each matmul reads its weight matrix
(2-12 MB) from HBM. A kernel that short never reaches HBM's bandwidth: it spends most of its few
microseconds waiting for the first bytes. Measured on the H200, a bs-1 step read its 1.1 GB of
weights at under 1 TB/s of the 4.3 available (docs/benchmarks.md). The prefetch kernel only issues
`prefetch.global.L2` for every 128-byte line of those matrices and exits; the memory system then
streams them into L2 (50 MB on an H100/H200; one Qwen3-0.6B layer is 30 MB) while the main stream
is still busy with norm, qkv, RoPE and attention, and the matmuls find their weights in L2.

It never changes a value: it reads weights only, writes nothing, and the main stream does not
wait for it (only the end of the graph joins the two streams). Outside a capture nothing is
launched (eagerly it would cost the host two launches per layer per step), except once, so that
Triton compiles and loads the kernel before the capture, where loading a module is not allowed.
Switched on by "prefetch" in `MINISGL_EDU_TRITON` (kernels/__init__.py).
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

LINE_BYTES = 128  # one L2 cache line
# A few SMs issue the prefetches; the rest stay free for the main stream.
PROGRAMS_PER_TENSOR = int(os.environ.get("MINISGL_EDU_L2_PROGRAMS", "8"))
MAX_TENSORS = 4
MAX_TOKENS = 16  # batches this small read weights, nothing else (as the skinny GEMM's MAX_ROWS)


@triton.jit
def _l2_prefetch_kernel(a0, n0, a1, n1, a2, n2, a3, n3, LINE: tl.constexpr, BLOCK: tl.constexpr):
    # Program (i, j) prefetches every PROGRAMS-th block of BLOCK lines of tensor j, which starts at
    # address aj (an integer: only the address matters, nothing is loaded) and has nj bytes.
    j = tl.program_id(1)
    addr = tl.where(j == 0, a0, tl.where(j == 1, a1, tl.where(j == 2, a2, a3)))
    nbytes = tl.where(j == 0, n0, tl.where(j == 1, n1, tl.where(j == 2, n2, n3)))
    lines = ((nbytes + LINE - 1) // LINE).to(tl.int32)  # the loop below counts in int32
    for start in range(tl.program_id(0) * BLOCK, lines, tl.num_programs(0) * BLOCK):
        line = tl.minimum(start + tl.arange(0, BLOCK), lines - 1)  # the tail repeats the last line
        # Not pure: the instruction has an effect the compiler cannot see, so it is never removed.
        tl.inline_asm_elementwise("mov.u32 $0, 0;\n\tprefetch.global.L2 [$1];", "=r,l",
                                  [addr + line.to(tl.int64) * LINE], dtype=tl.int32, is_pure=False, pack=1)


def launch(tensors: list[torch.Tensor]) -> None:
    """One kernel on the current stream that prefetches up to four tensors into L2 (in this order)."""
    assert 0 < len(tensors) <= MAX_TENSORS
    args: list[int] = []
    for t in tensors:
        args += [t.data_ptr(), t.numel() * t.element_size()]
    args += [0, 0] * (MAX_TENSORS - len(tensors))
    # Programs are scheduled in order of their ids, x fastest: tensor 0's go first.
    _l2_prefetch_kernel[(PROGRAMS_PER_TENSOR, len(tensors))](*args, LINE=LINE_BYTES, BLOCK=1024, num_warps=4)


class LayerPrefetcher:
    """Forks prefetch kernels onto a side stream during a CUDA-graph capture; `join()` at the end."""

    _streams: dict[torch.device, torch.cuda.Stream] = {}
    _compiled = False

    def __init__(self, device: torch.device) -> None:
        if device not in self._streams:
            self._streams[device] = torch.cuda.Stream(device)
        self.side = self._streams[device]
        self.capturing = torch.cuda.is_current_stream_capturing()
        self.forked = False

    def fetch(self, tensors: list[torch.Tensor]) -> None:
        if not self.capturing:
            if not LayerPrefetcher._compiled:  # compile + load now, never during a capture
                launch(tensors)
                LayerPrefetcher._compiled = True
            return
        self.side.wait_stream(torch.cuda.current_stream())  # in the graph: an edge, not a wait
        with torch.cuda.stream(self.side):
            launch(tensors)
        self.forked = True

    def join(self) -> None:
        """A capture must end with every forked stream joined back into the capturing stream."""
        if self.forked:
            torch.cuda.current_stream().wait_stream(self.side)
            self.forked = False
