"""Who am I among the tensor-parallel ranks, and the collectives the parallel layers use.

Where this sits on the request path: set up once at start-up, in each `minisgl-TP{i}-scheduler`
process, before the model is built (`init_tp`); afterwards the layers of `linear.py` call
`all_reduce` / `all_gather_last_dim` inside every forward pass, and `scheduler/io/tp_io.py` uses the
CPU group to pass the scheduler's messages from rank 0 to the others.

Like SGLang's `parallel_state`, the state is module-global: a process is one rank for its whole
life, and the layers can ask for the rank without it being threaded through every constructor.
Before `init_tp` (or with one rank) the size is 1 and every collective returns its input
untouched, so the single-process engine, the notebooks and the tests never touch
`torch.distributed`.

Two groups, as in SGLang: the *device* group carries tensors (NCCL on CUDA, gloo on CPU); the
*CPU* group (always gloo) carries Python objects (the messages of a scheduler step), which NCCL
cannot send.
"""

from __future__ import annotations

import datetime
from typing import Any, Optional

import torch

_RANK = 0
_SIZE = 1
_DEVICE_GROUP: Any = None
_CPU_GROUP: Any = None


def init_tp(rank: int, size: int, init_method: str, backend: Optional[str] = None, timeout_s: float = 600.0) -> None:
    """Join the tensor-parallel group (blocks until all `size` ranks have called it).

    `init_method` is where the ranks meet, e.g. "tcp://127.0.0.1:29500" (rank 0 listens there).
    `backend`: "gloo" (CPU) or "nccl" (CUDA); None picks by whether CUDA is available.
    """
    global _RANK, _SIZE, _DEVICE_GROUP, _CPU_GROUP
    import torch.distributed as dist

    if size == 1:
        return  # nothing to join; stay the single-process engine
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(rank)  # rank i drives GPU i
    dist.init_process_group(
        backend, init_method=init_method, rank=rank, world_size=size, timeout=datetime.timedelta(seconds=timeout_s)
    )
    _RANK, _SIZE = rank, size
    _DEVICE_GROUP = dist.group.WORLD
    # Objects travel through pickle on the CPU; NCCL only moves GPU tensors.
    _CPU_GROUP = dist.new_group(backend="gloo") if backend == "nccl" else dist.group.WORLD


def destroy(wait_for_others_s: float = 0.0) -> None:
    """Leave the group (end of a rank's life, or between tests).

    `wait_for_others_s` > 0 first waits (at most that long) until every rank has arrived here.
    Why: rank 0 hosts the store the ranks met through, and a rank that tears its gloo context down
    while another still reads the last broadcast can take the process down with a C++ abort
    ("terminate called without an active exception"), seen once under load in CI. A rank that
    knows another has died passes 0: there is nobody to wait for.
    """
    global _RANK, _SIZE, _DEVICE_GROUP, _CPU_GROUP
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        if wait_for_others_s > 0 and _SIZE > 1:
            try:  # the CPU group is gloo, the one backend with a barrier that can time out
                dist.monitored_barrier(group=_CPU_GROUP, timeout=datetime.timedelta(seconds=wait_for_others_s))
            except RuntimeError:
                pass  # a rank is gone or stuck: leave anyway, the caller is shutting down
        dist.destroy_process_group()
    _RANK, _SIZE, _DEVICE_GROUP, _CPU_GROUP = 0, 1, None, None


def get_tp_rank() -> int:
    return _RANK


def get_tp_size() -> int:
    return _SIZE


def get_tp_group(cpu: bool = False) -> Any:
    """The device group (tensors) or, with `cpu=True`, the gloo group for Python objects."""
    return _CPU_GROUP if cpu else _DEVICE_GROUP


def all_reduce(x: torch.Tensor) -> torch.Tensor:
    """Sum `x` over the ranks, in place; every rank gets the sum. A no-op with one rank.

    A row-parallel layer's ranks each hold a partial sum of the output (their slice of the input
    times their slice of the weight); adding them up gives the full product.
    """
    if _SIZE == 1:
        return x
    import torch.distributed as dist

    dist.all_reduce(x, group=_DEVICE_GROUP)
    return x


def all_gather_last_dim(x: torch.Tensor) -> torch.Tensor:
    """Concatenate every rank's `x` along the last dimension, in rank order. A no-op with one rank.

    Used for the logits: rank r computed the scores of vocabulary shard r; all ranks need all of
    them to sample the same token.
    """
    if _SIZE == 1:
        return x
    import torch.distributed as dist

    x = x.contiguous()
    parts = [torch.empty_like(x) for _ in range(_SIZE)]
    dist.all_gather(parts, x, group=_DEVICE_GROUP)
    return torch.cat(parts, dim=-1)


def shard_range(total: int, rank: int, size: int) -> tuple[int, int, int]:
    """Rank `rank`'s part of `total` rows split as evenly as possible: (start, rows held, real rows).

    Every rank holds ceil(total / size) rows, so that all-gathered pieces have one shape; the last
    rank's extra rows (when `size` does not divide `total`, e.g. a vocabulary) are padding.
    """
    per_rank = -(-total // size)
    start = min(rank * per_rank, total)
    return start, per_rank, min(per_rank, total - start)


def check_tp_size(cfg: Any, tp_size: int) -> None:
    """Raise ValueError, with a clear message, if `tp_size` ranks cannot split this model.

    Whole attention heads go to each rank (a head's q, k and v must stay together for attention
    to be local), so tp_size must divide the query heads and the KV heads; the MLP's columns are
    split evenly too. The vocabulary need not divide: its last shard is padded.
    """
    if tp_size < 1:
        raise ValueError(f"tensor parallel size must be at least 1, got {tp_size}")
    if tp_size == 1:
        return
    bad = [
        f"{name} ({value})"
        for name, value in (
            ("query heads", cfg.num_heads),
            ("KV heads", cfg.num_kv_heads),
            ("MLP intermediate size", cfg.intermediate_size),
        )
        if value % tp_size
    ]
    if bad:
        ok = [
            n
            for n in range(1, cfg.num_kv_heads + 1)
            if cfg.num_heads % n == 0 and cfg.num_kv_heads % n == 0 and cfg.intermediate_size % n == 0
        ]
        raise ValueError(
            f"--tp {tp_size} does not divide the model's {', '.join(bad)}: each rank must hold whole "
            f"attention heads and an equal share of the MLP. Sizes that work for this model: "
            f"{', '.join(map(str, ok))}"
        )
