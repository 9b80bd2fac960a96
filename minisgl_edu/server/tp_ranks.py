"""Run the scheduler on N tensor-parallel ranks without the server: one process per rank, gloo.

Where this sits on the request path: beside it. The server starts its ranks in `server/launch.py`;
this helper does the same for tests and experiments (`generate_tp`): it spawns N processes that
meet over TCP on this machine, gives rank 0 a list of requests through in-memory queues, runs
every rank's scheduler until idle, and returns the tokens each rank sampled, so that a caller can
check that all ranks agree and match a single-process run.
"""

from __future__ import annotations

import faulthandler
import socket
from typing import Any

from minisgl_edu.core import SamplingParams


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(
    rank: int,
    tp_size: int,
    init_method: str,
    model: str,
    prompts: list[list[int]],
    params: list[SamplingParams],
    overrides: dict,
    results: Any,
) -> None:
    import torch

    # A rank that dies in C++ (an abort in the collectives' teardown, seen rarely on a loaded
    # machine) leaves no Python traceback; this prints every thread's Python stack when it does.
    faulthandler.enable(all_threads=True)
    torch.set_num_threads(1)  # N ranks on a small machine: one thread each, no oversubscription
    from minisgl_edu.distributed import destroy, init_tp
    from minisgl_edu.message import UserMsg
    from minisgl_edu.scheduler import Scheduler, SchedulerConfig
    from minisgl_edu.scheduler.io import QueueIO
    from minisgl_edu.scheduler.io.tp_io import TPFollowerIO, TPLeaderIO

    try:
        init_tp(rank, tp_size, init_method, backend="gloo", timeout_s=120)
        inbox = QueueIO()
        io = TPLeaderIO(inbox) if rank == 0 else TPFollowerIO()
        scheduler = Scheduler(SchedulerConfig(model=model, device="cpu", tp_size=tp_size, **overrides), io)
        if rank == 0:
            for uid, (ids, p) in enumerate(zip(prompts, params)):
                inbox.put(UserMsg(uid, list(ids), p))
        tokens: dict[int, list[int]] = {uid: [] for uid in range(len(prompts))}
        # Every rank steps in lockstep: the same messages give the same batches, and is_idle
        # becomes true at the same step everywhere.
        for record in scheduler.run_until_idle():
            for uid, token in record.next_tokens.items():
                tokens[uid].append(token)
        results.put((rank, tokens))
    except BaseException as e:
        results.put((rank, e))
        destroy()
        raise
    destroy(wait_for_others_s=30.0)  # all ranks finished: leave together (see `destroy`)


def generate_tp(
    model: str, prompts: list[list[int]], params: list[SamplingParams], tp_size: int, **overrides: Any
) -> list[dict[int, list[int]]]:
    """Tokens sampled by each rank (index = rank) for each request (uid = index in `prompts`)."""
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    mp.start_processes(
        _rank_main,
        nprocs=tp_size,
        start_method="spawn",
        args=(tp_size, f"tcp://127.0.0.1:{_free_port()}", model, prompts, params, overrides, results),
    )
    by_rank = dict(results.get() for _ in range(tp_size))
    return [by_rank[r] for r in range(tp_size)]
