"""Small host values on their way to the GPU: one way to make and copy them.

Where this sits on the request path: inside every step, wherever a list the scheduler built
(page ids, lengths, sampling parameters, penalties) becomes a tensor the GPU reads. On CUDA the
host tensor is page-locked (pinned): a copy from ordinary memory makes PyTorch wait for the GPU
stream first, which would stall the host while the previous batch runs, the very thing overlap
scheduling avoids. From pinned memory a `non_blocking` copy returns at once. On the CPU there is
nothing to copy and nothing to pin.
"""

from __future__ import annotations

from typing import Sequence

import torch


def host_tensor(values: Sequence, dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """`values` as a host tensor, page-locked when it is going to a CUDA device."""
    t = torch.tensor(values, dtype=dtype)
    return t.pin_memory() if torch.device(device).type == "cuda" else t


def to_device(values: Sequence, dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """`values` as a tensor on `device`; on CUDA, copied from page-locked memory without blocking."""
    return host_tensor(values, dtype, device).to(device, non_blocking=True)
