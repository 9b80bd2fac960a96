"""Timestamps of every ZeroMQ message a server process sends and receives, and of the scheduler's
launches: `scripts/server_hops.sh` puts this directory first on PYTHONPATH, so that each of the
server's processes imports it at start-up (Python imports `sitecustomize` by itself).

Each process appends lines to $HOP_PROBE_DIR/<pid>.log:

    <time.time()> send|asend|recv <message type>        (every process)
    <start> <end> launch_batch|_process_results        (the scheduler process, <pid>.sched.log)

`time.time()` is one clock for all processes of a machine. Measurement only: nothing here changes
what the server does, only what it writes down.
"""

import os
import time

LOG_DIR = os.environ.get("HOP_PROBE_DIR")


def _open(suffix: str):
    os.makedirs(LOG_DIR, exist_ok=True)
    return open(f"{LOG_DIR}/{os.getpid()}{suffix}", "a", buffering=1)


def _probe_messages() -> None:
    from minisgl_edu.server import ipc

    log = _open(".log")

    def write(kind: str, msg) -> None:
        log.write(f"{time.time():.6f} {kind} {type(msg).__name__}\n")

    def patch_put(cls, kind: str, is_async: bool) -> None:
        put = cls.put
        if is_async:

            async def logged(self, msg):
                write(kind, msg)
                return await put(self, msg)
        else:

            def logged(self, msg):
                write(kind, msg)
                return put(self, msg)

        cls.put = logged

    patch_put(ipc.ZmqPushQueue, "send", False)
    patch_put(ipc.ZmqAsyncPushQueue, "asend", True)
    decode = ipc.decode

    def logged_decode(data):
        msg = decode(data)
        write("recv", msg)
        return msg

    ipc.decode = logged_decode  # the pull queues decode every message they receive with it


def _probe_scheduler() -> None:
    from minisgl_edu.engine.engine import Engine
    from minisgl_edu.scheduler.scheduler import Scheduler

    log = _open(".sched.log")
    for owner, name in [(Engine, "launch_batch"), (Scheduler, "_process_results")]:
        inner = getattr(owner, name)

        def timed(*args, _inner=inner, _name=name, **kwargs):
            start = time.time()
            out = _inner(*args, **kwargs)
            log.write(f"{start:.6f} {time.time():.6f} {_name}\n")
            return out

        setattr(owner, name, timed)


if LOG_DIR:
    try:
        _probe_messages()
        _probe_scheduler()
    except ImportError:  # a Python process that is not the server's (pip, a client)
        pass
