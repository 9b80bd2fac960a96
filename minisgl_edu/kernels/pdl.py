"""Programmatic dependent launch (PDL): let a kernel start before the previous one has finished.

Where this sits on the request path: inside all of our Triton kernels (`skinny_gemm`, `gemv`,
`qk_rope_store`, `decode_attention`, `greedy`), so inside every layer of a small decode batch on an H100/H200 (compute capability 9.0 or newer).

Why: at decode batch 1 a layer is ~10 kernels of a few microseconds each, and between two of them
the GPU drains the first kernel, then launches and ramps up the second. With PDL (a launch
attribute, Hopper and newer) the second kernel's programs may start as soon as every program of
the first has called `gdc_launch_dependents()`; they do the work that does not depend on the
first kernel (load their weights), then block in `gdc_wait()` until the first kernel has finished
and its writes are visible. FlashInfer launches its norm, activation and attention kernels this way
on Hopper too; without it, each of our kernels would pay the full gap.

The rule that keeps it correct: a kernel launched with PDL must not read anything a previous
kernel may write, nor write anything at all, before its `gdc_wait()`. Model weights are safe to
read early; activations are not. The step's inputs copied in before the forward pass (positions,
KV slots, page lists) are safe too, because our kernels release the next one only *after* their
own wait: when a kernel starts, every kernel and copy before the one that released it has
finished. On a GPU without PDL, or launched without the attribute, `gdc_wait` returns at once,
so the kernels are correct either way.

`MINISGL_EDU_PDL=0` switches it off (`minisgl_edu/env.py`): a debugging switch, to rule PDL out
when a result looks like a race.
"""

from __future__ import annotations

import functools

import torch

from minisgl_edu import env


@functools.cache
def _enabled_on(device_index: int) -> bool:
    if not env.get().pdl or env.get().triton_interpret:
        return False
    import triton.language as tl

    if not hasattr(tl.extra.cuda, "gdc_wait"):  # Triton older than 3.3
        return False
    return torch.cuda.get_device_capability(device_index)[0] >= 9


def enabled(device: torch.device) -> bool:
    """Launch our kernels with PDL on this device? (CUDA, compute capability >= 9.0)"""
    return device.type == "cuda" and _enabled_on(
        device.index if device.index is not None else torch.cuda.current_device()
    )


def launch_options(device: torch.device) -> dict:
    """Keywords for launching one of our kernels on `device`: its `USE_PDL` constexpr and, when
    on, Triton's `launch_pdl` flag. Always both or neither: a kernel launched early without its
    `gdc_wait` would race with the previous one. (Older Triton lacks `launch_pdl`: never passed off.)
    """
    return {"USE_PDL": True, "launch_pdl": True} if enabled(device) else {"USE_PDL": False}
