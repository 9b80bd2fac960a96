"""`server/notebook.py`: the server a notebook starts is one at a time and never outlives the notebook.

Each test starts the real `python -m minisgl_edu.serve` on the tiny random-weight model (its
start-up is the import time of its processes, a few seconds). Waits are bounded loops that look
again every few tenths of a second; no assertion depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import httpx
import pytest
from live_server import pid_alive

from minisgl_edu.server.notebook import current_server, group_processes, start_server, stop_server

WORKERS = {"minisgl-TP0-scheduler", "minisgl-detokenizer-0", "minisgl-tokenizer-0"}
BOUND_S = 120  # upper bound of every wait: far beyond a normal start or stop, only there to end a hang


@pytest.fixture
def serve_args(tiny_model_dir):
    return ["--model", tiny_model_dir, "--device", "cpu", "--num-pages", "16"]


@pytest.fixture(autouse=True)
def no_server_left():
    yield
    stop_server()


def pids_alive(pids: set[int]) -> set[int]:
    """Those of `pids` that are still running (a zombie has exited: it only waits to be reaped)."""
    return {pid for pid in pids if pid_alive(pid)}


def wait_group_gone(pgid: int) -> list:
    deadline = time.monotonic() + BOUND_S
    while (left := group_processes(pgid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_start_twice_leaves_one_server_and_stop_leaves_none(serve_args):
    first = start_server(*serve_args)
    assert set(first.workers()) == WORKERS
    first_pids = {p.pid for p in first.processes()}
    assert first.pid in first_pids and len(first_pids) >= 4  # API server + 3 workers (+ resource tracker)

    second = start_server(*serve_args, "--num-tokenizer", "2")  # what re-running the cell does
    assert not first.alive()
    assert pids_alive(first_pids) == set()
    assert current_server() is second
    assert set(second.workers()) == WORKERS | {"minisgl-tokenizer-1"}
    r = httpx.post(second.url + "/v1/completions", json={"prompt": "Hello", "max_tokens": 2}, timeout=60)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 2

    second_pids = {p.pid for p in second.processes()}
    stop_server()
    assert current_server() is None
    assert group_processes(second.pid) == []
    assert pids_alive(second_pids) == set()
    assert not os.path.exists(second.log_path)
    stop_server()  # a second stop is harmless


def run_parent(serve_args: list[str], then: str) -> subprocess.Popen:
    """A Python process in the role of a notebook kernel: it starts a server, prints the
    server's pid (= its process group), then runs `then`."""
    code = textwrap.dedent(f"""
        import sys, time
        from minisgl_edu.server.notebook import start_server
        server = start_server(*{serve_args!r})
        print(server.pid, flush=True)
        {then}
    """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def server_pgid_of(parent: subprocess.Popen) -> int:
    line = parent.stdout.readline()  # blocks until the server is ready (or the parent failed)
    assert line.strip().isdigit(), f"the parent did not start a server (exit code {parent.wait()})"
    return int(line)


def test_interpreter_exit_stops_the_server(serve_args):
    parent = run_parent(serve_args, then="sys.exit(0)  # no stop_server(): the atexit hook must do it")
    pgid = server_pgid_of(parent)
    try:
        assert parent.wait(BOUND_S) == 0
        # The hook returned only once the group was empty, so nothing may be left right now.
        assert group_processes(pgid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_parent_killed_hard_takes_the_server_with_it(serve_args):
    parent = run_parent(serve_args, then="time.sleep(3600)")
    pgid = server_pgid_of(parent)
    try:
        names = {p.name for p in group_processes(pgid)}
        assert WORKERS <= names
        parent.kill()  # SIGKILL: no atexit, no Python code runs in the parent any more
        parent.wait()
        assert wait_group_gone(pgid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)


def test_a_server_that_cannot_start_raises_with_its_output():
    with pytest.raises(RuntimeError, match="exited with code 1") as err:
        start_server("--model", "/nonexistent/model/dir", "--device", "cpu")
    assert "[minisgl] error" in str(err.value)
    assert current_server() is None
