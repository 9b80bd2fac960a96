"""A time limit per grading case, so that an endless loop in a student's answer fails that case.

Where this sits in the course: `run_cases` (core.py) runs every case inside `time_limit(...)`. The
limit is a SIGALRM timer, which only the main thread can use; Jupyter runs cells in the main
thread, and so do pytest and the shell grader. Anywhere else the case simply runs without a limit.

Work that is not the student's (loading the model and tokenizer, the reference runs the answer is
compared with) runs inside `untimed()`, which pauses the timer: the limit measures the student's
code and the engine steps that use it, never how fast the machine loads a model.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Iterator, Optional


class CaseTimeout(BaseException):
    """A case ran past its limit. A BaseException, so that a student's `except Exception` does not
    swallow it and keep looping."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past {seconds:g} s")
        self.seconds = seconds


_active = False  # a time_limit timer is armed (untimed() pauses only ours)


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

    def on_alarm(signum, frame):
        raise CaseTimeout(seconds)

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    started, was_active = time.monotonic(), _active
    _active = True
    try:
        yield
    finally:
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
