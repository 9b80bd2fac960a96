"""Limits on a student's code: a time limit per grading case, and process limits for a whole notebook.

Where this sits in the course: `run_cases` (core.py) runs every case inside `time_limit(...)`. The
limit is a SIGALRM timer, which only the main thread can use; Jupyter runs cells in the main
thread, and so do pytest and the shell grader. Anywhere else the case simply runs without a limit.

Work that is not the student's (loading the model and tokenizer, the reference runs the answer is
compared with) runs inside `untimed()`, which pauses the timer: the limit measures the student's
code and the engine steps that use it, never how fast the machine loads a model.

`ProcessLimits` and `apply_process_limits()` are the other kind: the batch grader (sandbox.py)
grades each submission in a child process and caps it with the kernel's resource limits (CPU
time, address space, open files, processes, file size), so that a notebook that loops, allocates
or forks without end stops itself and nothing else. They bound resources; they are no security
boundary (docs/instructors.md says what they do not cover).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from typing import Iterator, Optional


class CaseTimeout(BaseException):
    """A case ran past its limit. A BaseException, so that a student's `except Exception` does not
    swallow it and keep looping."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past {seconds:g} s")
        self.seconds = seconds


_active = False  # a time_limit timer is armed (untimed() pauses only ours)
RETRY_S = 0.1  # after a time-out, the alarm comes again this often until the case has stopped


def _can_time() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds: Optional[float]) -> Iterator[None]:
    """Raise CaseTimeout in the body after `seconds` (None, or off the main thread: no limit).

    A timer that was already armed (pytest-timeout uses SIGALRM too) is put back afterwards with
    what was left of it."""
    global _active
    if not seconds or not _can_time():
        yield
        return

    running = True  # the body has not left yet

    def on_alarm(signum, frame):
        if running:
            # Raised again and again until it gets out: a CaseTimeout raised inside a callback the
            # interpreter guards (a gc callback, a __del__) is only printed as "Exception ignored",
            # and the loop it interrupted would then run on without a timer.
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)
            raise CaseTimeout(seconds)

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    started, was_active = time.monotonic(), _active
    _active = True
    try:
        yield
    finally:
        running = False  # first: an alarm already on its way now raises nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        _active = was_active
        if old_delay:
            left = max(old_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


@contextlib.contextmanager
def untimed() -> Iterator[None]:
    """Pause the case's timer while the body runs (model loading, reference runs)."""
    if not _active or not _can_time():
        yield
        return
    left, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if left:
            signal.setitimer(signal.ITIMER_REAL, left, interval)


# --- process limits for a whole notebook (the batch grader's child process) ------------------------

MiB = 1024 * 1024
CPU_GRACE = 5  # seconds between the soft CPU limit (SIGXCPU) and the hard one (SIGKILL)


@dataclass(frozen=True)
class ProcessLimits:
    """What one submission's grading process may use. The defaults leave a correct notebook far
    from every limit (the engine cases load the model and run a few requests)."""

    wall_s: float = 900.0  # enforced by the parent, which kills the child's process group
    cpu_s: int = 900
    memory_mb: int = 8192  # address space: torch maps much more than it touches
    open_files: int = 256
    processes: int = 64  # tasks (processes and threads) this user may add; torch starts threads
    file_mb: int = 2048  # the largest file it may write (a first conversion of the model writes ~600 MiB)


def _tasks_of_this_user() -> int:
    """Processes and threads that run under our real uid: the kernel's RLIMIT_NPROC counts them all."""
    uid, count = os.getuid(), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # it ended while we looked
        if int(status["Uid"].split()[0]) == uid:
            count += int(status["Threads"])
    return count


def _lower(which: int, soft: int, hard: Optional[int] = None) -> None:
    """Set a limit, never above the hard limit we were given (only root may raise one)."""
    _, old_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if old_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, old_hard), min(hard, old_hard)
    resource.setrlimit(which, (soft, hard))


def apply_process_limits(limits: ProcessLimits) -> None:
    """Cap this process and every process it starts (they inherit the limits)."""
    _lower(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + CPU_GRACE)  # SIGXCPU, then SIGKILL
    _lower(resource.RLIMIT_AS, limits.memory_mb * MiB)  # an allocation past it fails: MemoryError
    _lower(resource.RLIMIT_NOFILE, limits.open_files)
    # Per user, not per process tree: allow what already runs plus `processes`. Root (or a
    # process with CAP_SYS_RESOURCE) is exempt from this one.
    _lower(resource.RLIMIT_NPROC, _tasks_of_this_user() + limits.processes)
    _lower(resource.RLIMIT_FSIZE, limits.file_mb * MiB)  # a longer write gets SIGXFSZ
    _lower(resource.RLIMIT_CORE, 0)  # a crash leaves no core file in the work directory
