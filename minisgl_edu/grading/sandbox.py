"""Grade one submission in a child process of its own, with limits, so that a hostile or broken
notebook scores 0 for itself and the batch goes on.

Where this sits in the course: the batch grader (`python -m minisgl_edu.grading --batch DIR`,
`batch.py`) calls `grade_in_child` once per notebook. Three processes take part:

    batch grader (this module, the parent)
      └─ guard    `python -m minisgl_edu.grading.sandbox LIMITS submission.ipynb`
           └─ grader `python -m minisgl_edu.grading --json submission.ipynb`  (runs the cells)

* The parent copies the notebook into a fresh temporary directory, starts the guard there in a
  new session (its own process group), waits at most `wall_s`, then kills the whole group: what
  the notebook left running (a forked child, an endless loop) goes with it.
* The guard applies the resource limits (limits.py) to itself, so the grader inherits them, and
  passes the grader's exit status on. It exists so that the notebook's parent is not the batch
  grader: a notebook that kills its parent kills the guard, and only its own score is lost.
* The grader prints its result as JSON lines on stdout; the parent reads them back into a
  `NotebookGrade`. Anything else (no result, a signal, the wall time) gives every case of the
  exercises the notebook names 0, with one message saying why.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from minisgl_edu.grading.limits import ProcessLimits, apply_process_limits
from minisgl_edu.grading.notebook import NotebookGrade, exercises_named, from_records, not_graded

COPY_NAME = "submission.ipynb"
MAX_OUTPUT = 16 * 1024 * 1024  # bytes of result read from the grader; a flood stops here
READ_GRACE_S = 5.0  # after the group is killed, how long to wait for the last bytes of output


# --- the parent side ------------------------------------------------------------------------------


def _read_into(fd: int, out: bytearray) -> None:
    while len(out) < MAX_OUTPUT:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        out += chunk


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _child_env(work: str) -> dict:
    env = dict(os.environ)
    env.update(TMPDIR=work, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run_guard(work: str, limits: ProcessLimits) -> tuple[int, bool, bytes]:
    """Run the guard in `work`; return its exit status, whether it ran past the wall time, and
    what the grader printed."""
    cmd = [sys.executable, "-m", __name__, json.dumps(dataclasses.asdict(limits)), COPY_NAME]
    proc = subprocess.Popen(
        cmd,
        cwd=work,
        env=_child_env(work),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, which we kill at the end
    )
    output = bytearray()
    reader = threading.Thread(target=_read_into, args=(proc.stdout.fileno(), output), daemon=True)
    reader.start()
    try:
        proc.wait(timeout=limits.wall_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    _kill_group(proc.pid)  # the guard's pid is its group's id; this also sweeps leftovers
    proc.wait()
    # A process that left the group (setsid) may still hold the pipe open: do not wait for it.
    reader.join(timeout=READ_GRACE_S)
    data = bytes(output)
    proc.stdout.close()
    return proc.returncode, timed_out, data


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _why_no_result(status: int, timed_out: bool, limits: ProcessLimits) -> str:
    """The message a student reads when their notebook's grading process ended without a result."""
    if timed_out:
        return f"stopped: it ran past the wall-time limit of {limits.wall_s:g} s (a cell or an answer that never ends?)"
    if status < 0:  # the guard itself was killed: only the notebook's code had a reason to
        return f"the grading process was killed by {_signal_name(-status)} (does the notebook kill its parent process?)"
    if status > 128:  # the guard's report of a grader killed by a signal
        sig = status - 128
        if sig == signal.SIGXCPU:
            return f"stopped: it used more than the CPU-time limit of {limits.cpu_s} s"
        if sig == signal.SIGXFSZ:
            return f"stopped: it wrote a file larger than the limit of {limits.file_mb} MiB"
        if sig == signal.SIGKILL:
            return "the grader was killed by SIGKILL (past the hard CPU-time limit, or by the notebook itself)"
        return f"the grader crashed with {_signal_name(sig)} (out of memory under the {limits.memory_mb} MiB limit?)"
    return f"the grader stopped with exit status {status} before printing a result (does the notebook exit?)"


def _parse(notebook: str, data: bytes) -> NotebookGrade | None:
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # not ours
        if isinstance(rec, dict):
            records.append(rec)
    return from_records(notebook, records) if records else None


def grade_in_child(path: str, limits: ProcessLimits = ProcessLimits()) -> NotebookGrade:
    """Grade the notebook at `path` in a limited child process, in a fresh temporary directory."""
    try:
        names = exercises_named(path)
    except Exception as e:  # not JSON, not a notebook: nothing to run
        return NotebookGrade(path, problem=f"not a readable notebook: {type(e).__name__}: {e}")
    with tempfile.TemporaryDirectory(prefix="minisgl-grading-", ignore_cleanup_errors=True) as work:
        shutil.copyfile(path, os.path.join(work, COPY_NAME))
        status, timed_out, data = _run_guard(work, limits)
    result = _parse(path, data) if status in (0, 1) and not timed_out else None
    if result is not None:
        return result
    problem = _why_no_result(status, timed_out, limits)
    return NotebookGrade(path, [not_graded(name, problem) for name in names], problem)


# --- the guard (runs in the child) ----------------------------------------------------------------


def guard(limits_json: str, notebook: str) -> int:
    """Apply the limits, run the grader on `notebook`, and exit with its status (128 + the signal
    that killed it, as a shell reports it)."""
    apply_process_limits(ProcessLimits(**json.loads(limits_json)))
    grader = subprocess.run([sys.executable, "-m", "minisgl_edu.grading", "--json", notebook], stdin=subprocess.DEVNULL)
    return grader.returncode if grader.returncode >= 0 else 128 - grader.returncode


if __name__ == "__main__":
    sys.exit(guard(*sys.argv[1:]))
