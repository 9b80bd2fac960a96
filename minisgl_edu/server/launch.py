"""Start the server: name and start the worker processes, wait until they are ready, then serve.

Where this sits on the request path: it builds the path. The main process will run the API
server; before that it starts, with `multiprocessing` (spawn: a fresh interpreter per worker,
no state inherited by accident, and safe with CUDA):

    minisgl-TP{i}-scheduler   one per tensor-parallel rank (`--tp N`): `_run_scheduler` owns a
                              `Scheduler`, i.e. the model (its 1/N share) and its KV cache;
                              rank 0 receives the requests and passes them on to the others
    minisgl-detokenizer-0     `tokenize_worker`, turns tokens into text
    minisgl-tokenizer-{i}     `tokenize_worker`, turns prompts into tokens (`--num-tokenizer N`)

`.start()` only starts an interpreter; loading the model and allocating the cache take seconds.
Each worker reports on its own pipe when it is ready (or why it failed), and the main process
accepts requests only when every worker has reported.

Shutdown, in every case (Ctrl+C, SIGTERM, a worker that died, a start-up error): `ExitMsg` to
every worker, a few seconds to finish, then SIGTERM and SIGKILL for any that did not, and the
directory of ipc socket files is removed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from minisgl_edu.message.ipc import IpcAddresses
from minisgl_edu.server.args import ServerArgs


class WorkerDied(RuntimeError):
    """A worker process exited (or failed to start). The message names it."""


@dataclass
class Worker:
    name: str
    process: Any  # multiprocessing.Process
    ready_conn: Any  # read end of the pipe the worker reports readiness on
    inbox: str  # ZeroMQ address the worker receives on (for ExitMsg)
    info: dict = field(default_factory=dict)  # what it reported when ready

    def describe_exit(self) -> str:
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        return f"worker {self.name} (pid {self.process.pid}) died ({how})"


def _run_scheduler(
    *,
    name: str,
    rank: int,
    model_dir: str,
    overrides: dict,
    addrs: IpcAddresses,
    ready_conn: Any,
    tp_size: int = 1,
    dist_init_method: str = "",
    cpu_threads: int = 0,
) -> None:
    """Process entry of `minisgl-TP{rank}-scheduler`: build the Scheduler, then run its loop."""
    from minisgl_edu.process import frozen_heap, init_worker, parent_alive, scheduler_cpu_threads

    init_worker(name)
    import torch

    from minisgl_edu.engine.config import resolve_device

    cuda = resolve_device(overrides.get("device", "auto")).type == "cuda"
    torch.set_num_threads(scheduler_cpu_threads(cpu_threads, tp_size, cuda))
    io = None
    try:
        from minisgl_edu.scheduler import Scheduler, SchedulerConfig
        from minisgl_edu.scheduler.io.zmq_io import ZmqSchedulerIO

        zmq_io = None
        if rank == 0:  # only rank 0 talks to the tokenizers and the detokenizer
            io = zmq_io = ZmqSchedulerIO(addrs.scheduler, addrs.detokenizer, parent_alive=parent_alive)
        if tp_size > 1:
            from minisgl_edu.distributed import init_tp
            from minisgl_edu.scheduler.io.tp_io import TPFollowerIO, TPLeaderIO

            # Meet the other ranks (blocks until all have started), before the model is built:
            # its layers ask how many ranks share them.
            init_tp(rank, tp_size, dist_init_method)
            io = TPLeaderIO(zmq_io) if rank == 0 else TPFollowerIO()
        scheduler = Scheduler(SchedulerConfig(model=model_dir, tp_size=tp_size, **overrides), io)
        import dataclasses

        info = {
            "max_seq_len": scheduler.max_seq_len,
            "weights": scheduler.engine.weights,
            "kv_cache": scheduler.engine.pool.describe(),
            "vocab_size": scheduler.vocab_size,
            "max_running_requests": scheduler.max_running,
            "stats": dataclasses.asdict(scheduler.stats()),
        }
    except BaseException:
        ready_conn.send({"name": name, "ok": False, "error": traceback.format_exc()})
        raise
    # Every rank reports; the server accepts requests only once all of them have.
    ready_conn.send({"name": name, "ok": True, "info": info})
    ready_conn.close()
    clean_exit = False
    try:
        with frozen_heap():
            scheduler.run_loop()  # normal_loop, or overlap_loop on CUDA; returns on ExitMsg
        clean_exit = True
    finally:
        if zmq_io is not None:
            zmq_io.close()
        if tp_size > 1:
            from minisgl_edu.distributed import destroy

            # Every rank got the ExitMsg: wait for the others briefly. After a crash, do not.
            destroy(wait_for_others_s=5.0 if clean_exit else 0.0)


def start_workers(args: ServerArgs, model_dir: str, addrs: IpcAddresses) -> list[Worker]:
    from minisgl_edu.process import set_worker_environment
    from minisgl_edu.tokenizer.server import tokenize_worker

    set_worker_environment()  # before any worker starts: each inherits it and reads it at import
    ctx = mp.get_context("spawn")
    workers: list[Worker] = []

    def start(name: str, target: Any, inbox: str, **kwargs: Any) -> None:
        reader, writer = ctx.Pipe(duplex=False)
        # daemon: if the main process exits without shutdown_workers, multiprocessing still ends them.
        proc = ctx.Process(target=target, name=name, kwargs={**kwargs, "name": name, "ready_conn": writer}, daemon=True)
        proc.start()
        writer.close()  # the child has its copy; ours closed means EOF when the child dies
        workers.append(Worker(name, proc, reader, inbox))

    # Where the tensor-parallel ranks meet (torch.distributed's TCP rendezvous; rank 0 listens).
    dist_init_method = f"tcp://127.0.0.1:{_free_port()}" if args.tp_size > 1 else ""
    for rank in range(args.tp_size):
        # Every rank's inbox for ExitMsg is rank 0's socket: rank 0 passes ExitMsg on to the others.
        start(
            f"minisgl-TP{rank}-scheduler",
            _run_scheduler,
            addrs.scheduler,
            rank=rank,
            model_dir=model_dir,
            overrides=args.scheduler_overrides(),
            addrs=addrs,
            tp_size=args.tp_size,
            dist_init_method=dist_init_method,
            cpu_threads=args.cpu_threads,
        )
    start(
        "minisgl-detokenizer-0",
        tokenize_worker,
        addrs.detokenizer,
        model_dir=model_dir,
        recv_addr=addrs.detokenizer,
        frontend_addr=addrs.frontend,
        backend_addr=None,
    )
    for i in range(args.num_tokenizer):
        start(
            f"minisgl-tokenizer-{i}",
            tokenize_worker,
            addrs.tokenizers[i],
            model_dir=model_dir,
            recv_addr=addrs.tokenizers[i],
            frontend_addr=addrs.frontend,
            backend_addr=addrs.scheduler,
        )
    return workers


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(workers: list[Worker], timeout: float) -> None:
    """Block until every worker reported ready; raise WorkerDied if one fails, dies or is too slow."""
    from multiprocessing.connection import wait

    pending = {w.ready_conn: w for w in workers}
    by_sentinel = {w.process.sentinel: w for w in workers}
    deadline = time.monotonic() + timeout
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            names = ", ".join(w.name for w in pending.values())
            raise WorkerDied(f"not ready after {timeout:.0f} s: {names}")
        for obj in wait(list(pending) + list(by_sentinel), timeout=left):
            if obj in by_sentinel:
                w = by_sentinel[obj]
                if w.ready_conn in pending:
                    w.process.join(1)
                    raise WorkerDied(w.describe_exit() + " during start-up")
                continue
            w = pending.pop(obj)
            try:
                report = obj.recv()
            except EOFError:
                w.process.join(1)
                raise WorkerDied(w.describe_exit() + " during start-up") from None
            if not report.get("ok"):
                raise WorkerDied(f"worker {w.name} failed to start:\n{report.get('error', '')}")
            w.info = report.get("info", {})
        # Once ready, a worker's sentinel only matters to the watchdog in the API server.
        by_sentinel = {s: w for s, w in by_sentinel.items() if w.ready_conn in pending}


def shutdown_workers(workers: list[Worker], timeout: float = 5.0) -> None:
    """ExitMsg to every live worker, then escalate: SIGTERM, SIGKILL. Never leaves an orphan."""
    import zmq

    from minisgl_edu.message import ExitMsg
    from minisgl_edu.message.codec import encode
    from minisgl_edu.message.ipc import ZmqPushQueue

    live = [w for w in workers if w.process.is_alive()]
    if live:
        ctx = zmq.Context()
        for w in live:
            q = ZmqPushQueue(ctx, w.inbox)
            try:
                q.socket.send(encode(ExitMsg()), flags=zmq.NOBLOCK)
            except zmq.Again:
                pass
            q.close()
        ctx.term()
    deadline = time.monotonic() + timeout
    for w in live:
        w.process.join(max(deadline - time.monotonic(), 0))
    for sig_fn in ("terminate", "kill"):
        stuck = [w for w in workers if w.process.is_alive()]
        for w in stuck:
            getattr(w.process, sig_fn)()
        for w in stuck:
            w.process.join(2)
    for w in workers:
        w.ready_conn.close()


def _bind_socket(host: str, port: int) -> socket.socket:
    """Bind the HTTP port before loading anything, so that a port in use fails in a second."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise OSError(e.errno, f"cannot listen on {host}:{port}: {e.strerror}") from None
    # Listening now means a client that connects right after "ready" waits in the backlog for
    # uvicorn to accept, instead of being refused.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _remove_stale_ipc_dirs() -> None:
    """A server killed with SIGKILL cannot clean up: remove socket directories of dead servers."""
    import glob
    import re

    for path in glob.glob(os.path.join(tempfile.gettempdir(), "minisgl-*-*")):
        m = re.fullmatch(r"minisgl-(\d+)-\w+", os.path.basename(path))
        if not m or not os.path.isdir(path):
            continue
        try:
            os.kill(int(m.group(1)), 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:  # alive, owned by someone else
            pass


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def launch_server(args: ServerArgs) -> int:
    """The whole server's life; returns the process exit code."""
    start = time.perf_counter()
    # Until the API server installs its own handlers, SIGTERM behaves like Ctrl+C: clean up, exit.
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    _remove_stale_ipc_dirs()
    ipc_dir = tempfile.mkdtemp(prefix=f"minisgl-{os.getpid()}-")
    workers: list[Worker] = []
    sock = None
    try:
        if not args.shell:
            sock = _bind_socket(args.host, args.port)
            if not args.api_key and not _is_loopback(args.host):
                print(
                    f"[minisgl] warning: listening on {args.host} without --api-key: anyone who can reach "
                    "this port can use the model",
                    file=sys.stderr,
                    flush=True,
                )
        from minisgl_edu.models import resolve_model

        # Resolved once here, so that no worker converts or downloads the model by itself.
        try:
            model_dir = resolve_model(args.model)
        except (ValueError, RuntimeError, FileNotFoundError) as e:
            print(f"[minisgl] error: {e}", file=sys.stderr, flush=True)
            return 1
        if args.tp_size > 1:
            # Refuse a --tp that cannot split the model now, from config.json alone, rather than
            # after starting N processes that each load weights and then fail.
            from minisgl_edu.distributed import check_tp_size
            from minisgl_edu.models import ModelConfig

            try:
                check_tp_size(ModelConfig.from_dir(model_dir), args.tp_size)
            except ValueError as e:
                print(f"[minisgl] error: {e}", file=sys.stderr, flush=True)
                return 1
        addrs = IpcAddresses.in_dir(ipc_dir, args.num_tokenizer)
        workers = start_workers(args, model_dir, addrs)
        wait_ready(workers, args.startup_timeout)
        info = workers[0].info
        names = ", ".join(f"{w.name}[{w.process.pid}]" for w in workers)
        where = "interactive shell" if args.shell else f"http://{args.host}:{args.port}"
        print(
            f"[minisgl] ready in {time.perf_counter() - start:.1f} s: {args.model_name} "
            f"(context {info.get('max_seq_len')} tokens, {info.get('weights')}, {info.get('kv_cache')}, "
            f"up to {info.get('max_running_requests')} running requests) on {where}; processes: {names}",
            flush=True,
        )
        if args.shell:
            from minisgl_edu.server.shell import run_shell

            return run_shell(args, addrs, workers)
        from minisgl_edu.process import frozen_heap
        from minisgl_edu.server.api_server import run_api_server

        with frozen_heap():
            return run_api_server(args, addrs, workers, sock)
    except WorkerDied as e:
        print(f"[minisgl] error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("[minisgl] interrupted, shutting down", file=sys.stderr, flush=True)
        return 130
    except OSError as e:
        print(f"[minisgl] error: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl+C must not skip the cleanup
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if sock is not None:
            sock.close()
        shutdown_workers(workers)
        shutil.rmtree(ipc_dir, ignore_errors=True)
