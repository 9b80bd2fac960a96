"""Start the real server from a notebook, safely: at most one, and never one left behind.

Where this sits on the request path: outside it. A notebook cell plays the client; this module
starts `python -m minisgl_edu.serve` (API server, tokenizer(s), scheduler, detokenizer: the
very processes a terminal would run) in a subprocess on a free port and waits until it answers.

    from minisgl_edu.server.notebook import start_server, stop_server
    server = start_server("--num-pages", "256")      # returns once /health answers
    httpx.post(server.url + "/v1/chat/completions", json=...)
    server.processes()                               # the API server and its workers
    stop_server()

Three ways a notebook leaks a server, and what this module does about each:

* Re-running the cell: `start_server` first stops the server it started before.
* Closing or restarting the kernel: an `atexit` hook stops the server when the interpreter exits.
* A kernel killed hard (SIGKILL, out of memory): no Python code runs any more. The server is
  started through a tiny trampoline (`python -m minisgl_edu.server.notebook`, see `_exec_serve`)
  that asks Linux for a signal when its parent dies (`prctl(PR_SET_PDEATHSIG)`), then replaces
  itself with `python -m minisgl_edu.serve`; the setting survives that `exec`. SIGTERM then makes
  the API server stop its workers, and each worker has the same tie to the API server
  (`process.py`). Other systems have no such call: there only the first two apply.

The server runs in a process group of its own (`start_new_session=True`), for two reasons:
Jupyter's "interrupt" sends SIGINT to the kernel's whole group, which would otherwise stop the
server too; and stopping means "every process of that group is gone", which catches any helper
process (multiprocessing's resource tracker, say) that is not one of the named workers.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

READY_LINE = "[minisgl] ready in"  # launch.py prints it once every worker has reported ready
POLL_S = 0.2  # how often the waiting loops look again; only how quickly they notice, not a deadline


@dataclass(frozen=True)
class ProcessInfo:
    """One live process of a server, as `ps` shows it."""

    pid: int
    ppid: int
    name: str  # the command line; a worker's is its title, e.g. "minisgl-tokenizer-0"


def group_processes(pgid: int) -> list[ProcessInfo]:
    """The live processes of process group `pgid`, the group leader first (zombies left out).

    Read from `ps`, the command a student would type, which works on Linux and macOS alike; `-ww`
    for whole command lines (without it, ps cuts each line at the terminal's width, or at 80
    columns when it cannot tell: a long path to python then hides what the process is).
    """
    out = subprocess.run(
        ["ps", "-ww", "-A", "-o", "pid=,ppid=,pgid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    procs = []
    for line in out.splitlines():
        fields = line.split(None, 4)
        if len(fields) < 4 or int(fields[2]) != pgid or fields[3].startswith("Z"):
            continue
        procs.append(ProcessInfo(int(fields[0]), int(fields[1]), fields[4].strip() if len(fields) > 4 else ""))
    return sorted(procs, key=lambda p: (p.pid != pgid, p.pid))


@dataclass
class NotebookServer:
    """A running `python -m minisgl_edu.serve`, started by `start_server`."""

    process: subprocess.Popen
    port: int
    args: list[str]  # what followed `python -m minisgl_edu.serve --port PORT`
    log_path: str  # its stdout and stderr

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The API server's pid; also the id of the process group of all its processes."""
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def processes(self) -> list[ProcessInfo]:
        """The API server and the processes it started (workers, resource tracker), live ones only."""
        return group_processes(self.pid)

    def workers(self) -> dict[str, int]:
        """Worker name -> pid, e.g. {"minisgl-TP0-scheduler": 4242, ...}."""
        return {p.name: p.pid for p in self.processes() if p.name.startswith("minisgl-")}

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        """Stop the server and everything it started; returns the API server's exit code.

        SIGTERM first: the server's own clean shutdown (`ExitMsg` to every worker, its socket
        files removed). SIGKILL to the whole group for whatever is still there after that.
        Returns only once no process of the group is left.
        """
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout)
        # A helper may need a moment after the API server to notice that it is alone and exit.
        if not self._group_gone(within=5.0):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            if not self._group_gone(within=timeout):
                raise RuntimeError(f"processes of the server survived SIGKILL: {self.processes()}")
        code = self.process.wait()
        with contextlib.suppress(OSError):
            os.remove(self.log_path)
        return code

    def _group_gone(self, within: float) -> bool:
        deadline = time.monotonic() + within
        while self.alive() or self.processes():
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)
        return True


_current: Optional[NotebookServer] = None
_atexit_registered = False


def current_server() -> Optional[NotebookServer]:
    """The server `start_server` started last, if it is still running."""
    return _current if _current is not None and _current.alive() else None


def stop_server() -> None:
    """Stop the server `start_server` started, if any (safe to call twice)."""
    global _current
    server, _current = _current, None
    if server is not None:
        server.stop()


def start_server(*args: str, timeout: float = 300.0) -> NotebookServer:
    """Stop the previous server, start `python -m minisgl_edu.serve *args` on a free port, wait.

    `args` are the server's command-line options (`"--num-tokenizer", "4"`); `--port` is chosen
    here. Returns once the server printed its ready line and answers `/health`; raises
    RuntimeError with the server's output if it exits or is not ready within `timeout` seconds.
    """
    global _current, _atexit_registered
    stop_server()
    if not _atexit_registered:
        atexit.register(stop_server)
        _atexit_registered = True
    for _ in range(3):  # the free port can be taken by someone else before the server binds it
        _current = _spawn(_free_port(), list(args))
        try:
            _wait_ready(_current, timeout)
            return _current
        except _PortTaken:
            stop_server()
        except BaseException:  # not ready, or Ctrl+C / interrupt while waiting: leave nothing behind
            stop_server()
            raise
    raise RuntimeError("could not find a free port for the server")


class _PortTaken(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(port: int, args: list[str]) -> NotebookServer:
    fd, log_path = tempfile.mkstemp(prefix="minisgl-notebook-", suffix=".log")
    with os.fdopen(fd, "w") as log:
        # The trampoline gets our pid, so it can tell whether we died before it asked to be told.
        cmd = [sys.executable, "-m", "minisgl_edu.server.notebook", str(os.getpid()), "--port", str(port), *args]
        process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    return NotebookServer(process, port, args, log_path)


def _wait_ready(server: NotebookServer, timeout: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        if not server.alive():
            output = server.log()
            if "cannot listen on" in output:
                raise _PortTaken(output)
            raise RuntimeError(f"the server exited with code {server.process.returncode}:\n{output}")
        if READY_LINE in server.log():
            try:
                if httpx.get(server.url + "/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:  # uvicorn is not accepting yet
                pass
        if time.monotonic() > deadline:
            output = server.log()
            raise RuntimeError(f"the server was not ready after {timeout:.0f} s:\n{output}")
        time.sleep(POLL_S)


def _exec_serve(argv: list[str]) -> None:
    """The trampoline: `python -m minisgl_edu.server.notebook PARENT_PID SERVE_ARGS...`.

    Ask to get SIGTERM when the parent (the notebook's kernel) dies, then become
    `python -m minisgl_edu.serve SERVE_ARGS...` in this same process.
    """
    parent_pid, serve_args = int(argv[0]), argv[1:]
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before the call above took effect
        sys.exit(1)
    os.execv(sys.executable, [sys.executable, "-m", "minisgl_edu.serve", *serve_args])


if __name__ == "__main__":
    _exec_serve(sys.argv[1:])
