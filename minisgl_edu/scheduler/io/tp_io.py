"""How the tensor-parallel ranks agree on what to run: rank 0 passes every message on to the others.

Where this sits on the request path: between the tokenizer and the schedulers. Only rank 0
(`minisgl-TP0-scheduler`) listens to the tokenizer workers. Each time its scheduler asks for new
messages (once per `step()`), rank 0 broadcasts what it received, possibly nothing, over the
gloo CPU group; the other ranks' schedulers receive exactly that list at exactly the same step.
The scheduler is deterministic given its messages, so every rank then builds the same batches,
in the same order, and calls the model's collectives in lockstep (a rank that ran a different
batch would wait forever in an all-reduce).

Replies: all ranks sample the same tokens, so only rank 0 sends `DetokenizeMsg`s and stats; the
others' `send` does nothing.

Sampling with a temperature and no seed draws a random seed per request (`make_generator`).
Drawn on each rank, the ranks would pick different tokens and fall out of step; so rank 0 draws
it here and it travels in the broadcast message, and every rank seeds the request's generator
the same way.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from minisgl_edu.distributed.parallel_state import get_tp_group, get_tp_size
from minisgl_edu.message import BaseBackendMsg, DetokenizeMsg, UserMsg, unwrap
from minisgl_edu.scheduler.io.base import SchedulerIO


def _broadcast(msgs: list[BaseBackendMsg] | None) -> list[BaseBackendMsg]:
    import torch.distributed as dist

    if get_tp_size() == 1:
        return msgs or []  # one rank: nobody to tell
    box = [msgs]
    dist.broadcast_object_list(box, src=0, group=get_tp_group(cpu=True))
    return box[0]


def _fix_seed(msg: BaseBackendMsg) -> None:
    """Give an unseeded sampling request a seed now, so that all ranks use the same one."""
    for m in unwrap(msg):
        if isinstance(m, UserMsg):
            sp = m.sampling_params
            if not sp.is_greedy and sp.seed is None:
                m.sampling_params = dataclasses.replace(sp, seed=random.getrandbits(63))


class TPLeaderIO(SchedulerIO):
    """Rank 0: the real IO (ZeroMQ in the server, queues in tests), plus a broadcast of every receive."""

    def __init__(self, inner: SchedulerIO) -> None:
        self.inner = inner

    def recv(self, block: bool) -> list[BaseBackendMsg]:
        msgs = self.inner.recv(block)
        for m in msgs:
            _fix_seed(m)
        # Broadcast even an empty list: the other ranks are waiting to learn that nothing came.
        return _broadcast(msgs)

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        self.inner.send(msgs)

    @property
    def wants_stats(self) -> bool:
        return self.inner.wants_stats

    def send_stats(self, stats: Any) -> None:
        self.inner.send_stats(stats)


class TPFollowerIO(SchedulerIO):
    """Ranks 1..N-1: receive what rank 0 received; send nothing (rank 0 answers for every rank)."""

    def recv(self, block: bool) -> list[BaseBackendMsg]:
        return _broadcast(None)  # blocks until rank 0 has received (or waited its poll interval)

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        pass

    def send_stats(self, stats: Any) -> None:
        pass
