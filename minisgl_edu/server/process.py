"""What every worker process does first: take its name, and tie its life to the main process.

Where this sits on the request path: before it. `server/launch.py` starts the scheduler,
tokenizer and detokenizer processes; each calls `init_worker(name)` on entry.

* `setproctitle` makes `ps aux | grep '[m]inisgl'` list `minisgl-TP0-scheduler`,
  `minisgl-tokenizer-0` ... instead of a row of identical `python -c ...` lines.
* Ctrl+C in a terminal signals the whole foreground process group. Workers ignore SIGINT so that
  only the main process reacts, and then stops the workers in order (`ExitMsg`, then SIGTERM).
* If the main process dies without cleaning up (SIGKILL, a crash), the kernel sends the worker
  SIGTERM (Linux `PR_SET_PDEATHSIG`), so no orphan keeps a model in memory. Workers also check
  `parent_alive()` whenever they are idle, which covers systems without that call.
* The scheduler on CPU takes all cores but one for its torch threads (`scheduler_cpu_threads`).
"""

from __future__ import annotations

import os
import signal
import sys

_parent_pid: int = -1


def init_worker(name: str) -> None:
    global _parent_pid
    import multiprocessing

    parent = multiprocessing.parent_process()
    _parent_pid = parent.pid if parent is not None else -1
    try:
        import setproctitle

        setproctitle.setproctitle(name)
    except ImportError:  # the process still works, it is just harder to spot in `ps`
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except OSError:
            pass
    if not parent_alive():  # the parent died before prctl took effect
        sys.exit(1)


def parent_alive() -> bool:
    """False once the process that started this worker is gone (we were re-parented)."""
    return _parent_pid < 0 or os.getppid() == _parent_pid


def scheduler_cpu_threads(requested: int = 0, tp_size: int = 1) -> int:
    """How many threads torch may use in one scheduler process on CPU (`--cpu-threads`).

    `requested` > 0 is taken as it is. Otherwise: every core this process may run on but one,
    split between the tensor-parallel ranks, and at least one.

    Why not all of them: torch splits each op of a step between its OpenMP threads and waits at
    the op's end until every thread is done, hundreds of times per step. The server's other
    processes (API server, tokenizers, detokenizer) and whatever runs beside it (the benchmark
    client, a notebook kernel, a browser) need a core now and then; a thread that loses its core
    to one of them holds up every op for a whole time slice, while the threads waiting for it
    spin and take yet more CPU. On 2 cores, with a client and one busy process beside the server,
    that cost 6x in throughput (docs/benchmarks.md, "Sharing the cores"). One core left to the
    rest keeps the barrier and the other processes apart; with one core there is nothing to split.
    """
    if requested > 0:
        return requested
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, (cores - 1) // max(tp_size, 1))
