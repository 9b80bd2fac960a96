"""The last step of a small decode graph: float32 logits and the greedy token in one kernel (CUDA only).

Where this sits on the request path: the end of `CudaGraphRunner._forward` for the decode graphs
of at most `MAX_BS` requests (`engine/cuda_graph.py`). The LM head has just produced the logits in
the model's dtype; the graph needs them in float32 (for any sampling after the replay), the argmax
of each row (the greedy token), and that token written to `Engine.last_tokens` at the request's
row, where the next step's graph reads its input.

Why: as torch ops that is three kernels (`.float()`, `argmax`, `index_copy_`) and the gaps between
them, and torch's argmax over a 151,936-entry row runs on few blocks. Here `bs x ceil(V / BLOCK)`
programs each convert their slice, find its largest logit, and fold (value, index) into one int64
per row with an atomic max: the value's bits made to order like the float (negative floats have
their magnitude bits flipped) in the high half and `2^31 - 1 - index` in the low half, so that
equal values go to the smallest index, as `torch.argmax` does. The last program of a row to finish
(counted with an atomic add, as in `decode_attention.py`) reads the result, resets the row's
buffers for the next replay and writes the token. (One difference from torch: -0.0 orders below
+0.0 here, where torch calls them equal; it only matters if the largest logit is an exact zero of
both signs.)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from minisgl_edu.kernels import pdl

MAX_BS = 4  # graphs of up to this many requests end with this kernel; larger ones with torch's ops
BLOCK = 4096  # logits per program: 38 programs per row for a 151,936-token vocabulary
EMPTY = -(2**63)  # a row's key before any program has folded into it


@triton.jit
def _greedy_kernel(
    logits_ptr,
    out_ptr,
    rows_ptr,
    last_ptr,
    tokens_ptr,
    key_ptr,
    count_ptr,
    V,
    stride_l,
    stride_o,
    empty,
    BLOCK: tl.constexpr,
    USE_PDL: tl.constexpr,
):
    b = tl.program_id(0)
    p = tl.program_id(1)
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    offs = p * BLOCK + tl.arange(0, BLOCK)
    mask = offs < V
    x = tl.load(logits_ptr + b * stride_l + offs, mask=mask, other=float("-inf")).to(tl.float32)
    tl.store(out_ptr + b * stride_o + offs, x, mask=mask)
    best = tl.max(x, axis=0)
    idx = p * BLOCK + tl.argmax(x, axis=0, tie_break_left=True)
    bits = best.to(tl.int32, bitcast=True)
    ordered = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # int32 order = float order
    key = (ordered.to(tl.int64) << 32) + (2147483647 - idx).to(tl.int64)  # low half: smaller index wins ties
    tl.atomic_max(key_ptr + b, key, sem="relaxed")
    done = tl.atomic_add(count_ptr + b, 1, sem="acq_rel")
    if done == tl.num_programs(1) - 1:  # the last program of row b: every key is in
        final = tl.atomic_xchg(key_ptr + b, empty, sem="acq_rel")  # read it, and reset it for the next replay
        token = 2147483647 - (final & 2147483647)
        tl.store(tokens_ptr + b, token)
        tl.store(last_ptr + tl.load(rows_ptr + b), token)
        tl.store(count_ptr + b, 0)


class GreedyHead:
    """Fixed buffers for one captured batch size; call it inside the graph."""

    def __init__(self, bs: int, device: torch.device) -> None:
        self.key = torch.full((bs,), EMPTY, dtype=torch.int64, device=device)
        self.count = torch.zeros(bs, dtype=torch.int32, device=device)

    def __call__(
        self, logits: torch.Tensor, rows: torch.Tensor, last_tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """logits [bs, V] (half precision), rows [bs] (int64): -> (float32 logits [bs, V], greedy
        tokens [bs] int64); also last_tokens[rows[i]] = tokens[i]."""
        bs, V = logits.shape
        out = torch.empty((bs, V), dtype=torch.float32, device=logits.device)
        tokens = torch.empty(bs, dtype=torch.int64, device=logits.device)
        _greedy_kernel[(bs, triton.cdiv(V, BLOCK))](
            logits,
            out,
            rows,
            last_tokens,
            tokens,
            self.key,
            self.count,
            V,
            logits.stride(0),
            out.stride(0),
            EMPTY,
            BLOCK=BLOCK,
            num_warps=8,
            **pdl.launch_options(logits.device),
        )
        return out, tokens
