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
* Workers start with a short OpenMP spin (`set_worker_environment`), so torch's idle threads in
  the scheduler soon sleep instead of spinning on cores the other processes need.
* Once started up, a process runs its loop inside `frozen_heap()`, so that Python's garbage
  collector stops walking the objects of start-up (torch, the model, the libraries) again and again.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from typing import Iterator

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


def scheduler_cpu_threads(requested: int = 0, tp_size: int = 1, cuda: bool = False) -> int:
    """How many threads torch may use in one scheduler process (`--cpu-threads`).

    `requested` > 0 is taken as it is. On CUDA, one: the model runs on the GPU, and the host's
    tensors are a step's few hundred page ids and positions, which OpenMP threads only slow down
    (each op waits for all of them, on cores the API server, tokenizer and detokenizer use too;
    vLLM's GPU workers also run torch with one thread). On CPU, every core this process may run
    on, split between the tensor-parallel ranks (each rank is a process of its own), at least one.
    """
    if requested > 0:
        return requested
    if cuda:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(tp_size, 1))


def set_worker_environment() -> None:
    """Environment the worker processes start with (they inherit it; set before starting them).

    `GOMP_SPINCOUNT=1000`: torch splits each op of a step between its OpenMP threads (GNU
    OpenMP in torch's Linux wheels). A thread that has finished its share waits for the next op;
    by default it spins for 300,000 rounds first, which is most of the gap between two steps. On
    a machine whose cores the scheduler shares with the server's other processes (API server,
    tokenizers, detokenizer) and with whatever runs beside it (a benchmark client, a notebook
    kernel), the spinning threads take the CPU those processes need, and a thread that has lost
    its core makes the op wait a whole time slice. 1,000 rounds still cover the short gaps between
    the ops of one step; then the thread sleeps. On 2 cores, 16 streams, a client and a busy
    process beside the server: 7.0 -> 34 output tok/s; with the client alone ~10% slower
    (docs/benchmarks.md, "Sharing the cores", where the other choices measured are too).
    OpenMP reads the variable when it is loaded, so it must be in the environment before the
    worker imports torch. A wait policy the user chose is kept.
    """
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "1000")


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Inside the block, Python's garbage collector leaves alone every object alive when it began.

    A started process holds a few hundred thousand objects (torch, transformers, the model's
    modules, the server's libraries) that live as long as it does. The collector's full
    collections walk all of them, and in a loop that makes objects at every step (a decode step
    of 256 requests makes thousands) a full collection comes about every 1,000 steps and stops
    the process for ~0.2 s: on a GPU, a step the GPU waits for. `gc.freeze()` moves the objects
    of start-up to a generation the collector never visits; what the loop makes is collected as
    before. (vLLM freezes its engine's start-up heap; SGLang offers it as its `freeze_gc` call.
    `docs/benchmarks.md`, "The garbage collector", has the difference measured.) On leaving, the objects
    are given back to the collector, so a process that goes on (a test, a benchmark that loads
    another model next) frees them as usual.
    """
    gc.collect()  # what is garbage already goes now, not into the frozen generation
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
