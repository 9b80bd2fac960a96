"""The real server in a subprocess, for the end-to-end tests: start it, wait for it, read it, stop it.

    @pytest.fixture(scope="module")
    def server(tmp_path_factory):
        with running(tmp_path_factory.mktemp("server"), "--num-tokenizer", "2", api_key=API_KEY) as srv:
            yield srv

`tests/conftest.py` builds the `client` (httpx) and `oai` (openai) fixtures on a module's `server`.
A server is small (NUM_PAGES pages of PAGE_SIZE tokens, 4 running requests) unless the arguments
say otherwise, and never outlives its test module: `stop` kills any worker left behind.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Iterator, Optional

import httpx

API_KEY = "test-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
NUM_PAGES = 96
PAGE_SIZE = 16
START_TIMEOUT = 240  # seconds; ~10 s with the converted model, more if it must be converted first
# Tests on a shared server use timeout(..., func_only=True): their bound covers the test body,
# while the server's start-up is bounded by START_TIMEOUT (and the fixture never waits longer).


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_of(pid: int) -> dict[int, str]:
    """pid -> command line of the live direct children of `pid` (from /proc)."""
    out = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[1]) == pid:
                child = int(stat.split("/")[2])
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    out[child] = f.read().replace(b"\0", b" ").decode().strip()
        except (OSError, IndexError, ValueError):
            continue
    return out


def process_state(pid: int) -> str | None:
    """The process's state letter from /proc (R running, S sleeping, T stopped, Z zombie, ...),
    None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def pid_alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z")


def assert_gone(workers: dict[int, str], timeout: float = 5.0) -> None:
    """No process of the server outlives it (multiprocessing's resource tracker may need a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = {pid: name for pid, name in workers.items() if pid_alive(pid)}
        if not alive:
            return
        time.sleep(0.1)
    raise AssertionError(f"still running after the server exited: {alive}")


@contextlib.contextmanager
def paused(srv: "ServerProcess", worker: str = "minisgl-TP0-scheduler"):
    """Freeze one worker (SIGSTOP) for the duration of the block, then let it go on (SIGCONT).

    A test that needs a request to still be running or waiting at some moment pauses the
    scheduler instead of betting on how fast the machine generates tokens: while it is stopped
    nothing finishes, however fast the machine is. The server sees a live process throughout.
    """
    pid = next(p for p, name in srv.workers.items() if name == worker)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


class ServerProcess:
    def __init__(
        self,
        tmp_path,
        *extra: str,
        api_key: Optional[str] = None,
        key_in_env: bool = False,
        shell: bool = False,
        new_session: bool = False,
    ) -> None:
        """`api_key`: the key the server requires, given as `--api-key` or, with `key_in_env`, in
        MINISGL_API_KEY (so that it is not in `ps`); the fixtures send it."""
        self.api_key = api_key
        self.auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if api_key and not key_in_env:
            extra = ("--api-key", api_key, *extra)
        env = {**os.environ, "MINISGL_API_KEY": api_key} if api_key and key_in_env else None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"server-{self.port}.log"
        args = [
            sys.executable,
            "-m",
            "minisgl_edu.serve",
            "--port",
            str(self.port),
            "--num-pages",
            str(NUM_PAGES),
            "--page-size",
            str(PAGE_SIZE),
            "--max-running-requests",
            "4",
            *extra,
        ]
        self.log = open(self.log_path, "w")
        # new_session: the server leads its own process group, as under a terminal or `timeout`.
        self.proc = subprocess.Popen(
            args,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if shell else subprocess.DEVNULL,
            text=True,
            start_new_session=new_session,
            env=env,
        )
        self.startup_seconds: float | None = None
        self.workers: dict[int, str] = {}

    def output(self) -> str:
        if not self.log.closed:  # stop() closes it; what the server wrote is still in the file
            self.log.flush()
        return self.log_path.read_text()

    def wait_ready(self, http: bool = True) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.output()}")
            m = re.search(r"ready in ([\d.]+) s", self.output())
            if m:
                if not http or self._healthy():
                    self.startup_seconds = float(m.group(1))
                    self.workers = children_of(self.proc.pid)
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server not ready after {START_TIMEOUT} s:\n{self.output()}")

    def _healthy(self) -> bool:
        try:
            return httpx.get(self.url + "/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def ipc_dirs(self) -> list[str]:
        return glob.glob(os.path.join(tempfile.gettempdir(), f"minisgl-{self.proc.pid}-*"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for pid in self.workers:  # never leave a worker behind, even if a test failed
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.log.close()


def chat_body(content="Say hello.", **kw):
    return {"model": "smollm2-135m", "messages": [{"role": "user", "content": content}], **kw}


def metrics(server) -> dict[str, float]:
    text = httpx.get(server.url + "/metrics", timeout=5).text
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(minisgl_\w+) ([\d.e+-]+)$", text, re.M)}


def parse_sse(raw: str) -> list[str]:
    """The `data:` payloads of an SSE body, checking the exact framing on the way."""
    assert raw.endswith("\n\n")
    events = raw[:-2].split("\n\n")
    payloads = []
    for ev in events:
        assert ev.startswith("data: ") and "\n" not in ev, repr(ev)
        payloads.append(ev[len("data: ") :])
    return payloads


# ---------------------------------------------------------------- waiting for what /metrics shows


def wait_metrics(server, cond, what: str, timeout: float = 20.0) -> dict:
    """/metrics once `cond(metrics)` holds. The server's gauges follow the scheduler's stats
    messages, sent after a change at most every `stats_interval`, so a change shows up there a
    little after it happened: wait for it rather than read the gauges once."""
    deadline = time.monotonic() + timeout
    m = metrics(server)
    while not cond(m):
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} after {timeout} s: {m}\n{_post_mortem(server)}")
        time.sleep(0.05)
        m = metrics(server)
    return m


def _post_mortem(server) -> str:
    """Each worker's process state (R running, S sleeping, T stopped, ...) and the log's tail."""
    states = [f"{name} ({pid}): {process_state(pid) or 'gone'}" for pid, name in server.workers.items()]
    tail = "\n".join(server.output().splitlines()[-40:])
    return "workers: " + ", ".join(states) + "\nthe server's log, last 40 lines:\n" + tail


def wait_idle(server, free_pages: float | None = None, timeout: float = 20.0) -> dict:
    """Wait until no request is anywhere in the server and `free_pages` (default: all) are free."""

    def idle(m: dict) -> bool:
        want = m["minisgl_kv_pages_total"] if free_pages is None else free_pages
        return (
            m["minisgl_kv_pages_free"] == want
            and m["minisgl_running_requests"] == 0
            and m["minisgl_waiting_requests"] == 0
            and m["minisgl_http_requests_in_flight"] == 0
        )

    return wait_metrics(server, idle, "idle", timeout)


@contextlib.contextmanager
def running(tmp_path, *extra: str, **kw) -> Iterator[ServerProcess]:
    """A ready server for the length of the block (a module's `server` fixture), then stopped."""
    srv = ServerProcess(tmp_path, *extra, **kw)
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()
