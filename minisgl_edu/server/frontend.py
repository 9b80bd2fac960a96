"""The API server's state: its side of the sockets, and which request waits for which uid.

Where this sits on the request path: first and last, in the main process.

    generate() --new_user(), send_one(TokenizeMsg)--> a tokenizer worker ... scheduler ... detokenizer
    listen() <--UserReply-- detokenizer: put the reply in ack_map[uid], which wakes that request

One coroutine per request waits on its own queue in `ack_map`; one `listen` coroutine receives
every reply and hands it to the right queue by uid. `serving()` runs `listen` and the watch on the
worker processes for as long as a front end (the HTTP server or the terminal shell) is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
from typing import Any, AsyncIterator, Callable, Optional, Union

from minisgl_edu.message import AbortMsg, SchedulerStatsMsg, TokenizeMsg, UserReply, unwrap
from minisgl_edu.message.stamps import stamp
from minisgl_edu.server.dashboard import Dashboard
from minisgl_edu.server.metrics import ServerMetrics
from minisgl_edu.server.stages import StageLog

logger = logging.getLogger("minisgl.api")


class FrontendState:
    """The API server's side of the sockets, and who is waiting for which uid."""

    def __init__(
        self,
        addrs: Any,
        workers: list,
        initial_stats: Optional[dict] = None,
        max_in_flight: Optional[int] = None,
        request_timeout: Optional[float] = None,
        max_n: Optional[int] = None,
    ) -> None:
        import zmq.asyncio

        from minisgl_edu.message.ipc import ZmqAsyncPullQueue, ZmqAsyncPushQueue

        self.ctx = zmq.asyncio.Context()
        self.send_tokenizer = [ZmqAsyncPushQueue(self.ctx, a) for a in addrs.tokenizers]
        self.recv_tokenizer = ZmqAsyncPullQueue(self.ctx, addrs.frontend, bind=True)  # replies from the detokenizer
        self.workers = workers
        self.uid_counter = itertools.count()
        self.ack_map: dict[int, asyncio.Queue[UserReply]] = {}  # uid -> replies not yet consumed
        self.stats: dict = dict(initial_stats or {})
        self.dead_worker: Optional[str] = None  # set (to a message naming it) when a worker died
        self.shutting_down: Optional[str] = None  # set on Ctrl+C / SIGTERM
        self.max_in_flight = max_in_flight  # running + queued generation requests; None: no limit
        self.request_timeout = request_timeout  # seconds; None: no limit
        self.max_n = max_n  # the largest `n` one request may ask for (the running-request limit)
        # What /metrics serves: request timings observed by generate(), and the two values above
        # (the scheduler's latest stats, the requests waited on), read when /metrics is scraped.
        self.metrics = ServerMetrics(scheduler_stats=lambda: self.stats, in_flight=lambda: len(self.ack_map))
        self.dashboard = Dashboard()  # what /dashboard draws: fed below, by new_user and listen
        self.stages = StageLog(self.metrics.registry)  # where first tokens waited (/debug/stages, stages.py)
        self._background: set[asyncio.Task] = set()

    def new_user(self) -> int:
        """A fresh uid, and the queue its replies will arrive in."""
        uid = next(self.uid_counter)
        self.ack_map[uid] = asyncio.Queue()
        self.dashboard.request_started(uid)
        return uid

    async def send_one(self, msg: Union[TokenizeMsg, AbortMsg], route: int = -1) -> None:
        # Always the same tokenizer for one uid: its AbortMsg cannot overtake its TokenizeMsg.
        # `route`: the uid whose TokenizeMsg carried this one (the first of n answers).
        key = msg.uid if route < 0 else route
        await self.send_tokenizer[key % len(self.send_tokenizer)].put(msg)

    def finish_user(self, uid: int) -> None:
        self.ack_map.pop(uid, None)

    def abort_user(self, uid: int, route: int = -1) -> None:
        """The client is gone before its request finished: free it in the scheduler.

        Synchronous on purpose: it is called from `finally` blocks of cancelled coroutines, where
        an `await` would be cancelled again. The send runs as its own task.
        """
        if self.ack_map.pop(uid, None) is None:
            return  # finished, or already aborted
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called during interpreter shutdown: the scheduler is stopping anyway
            return
        task = loop.create_task(self.send_one(AbortMsg(uid=uid), route))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def listen(self) -> None:
        """Receive every reply from the detokenizer (and tokenizers) and wake the request it belongs to."""
        while True:
            try:
                msg = await self.recv_tokenizer.get()
            except asyncio.CancelledError:
                raise
            except Exception:  # one undecodable message must not stop all requests
                logger.exception("listen: bad message")
                continue
            for m in unwrap(msg):
                if isinstance(m, UserReply):
                    stamp(m.stamps, "api_recv")
                    self.dashboard.observe_reply(m)
                    queue = self.ack_map.get(m.uid)
                    if queue is not None:  # None: the client already left, drop it
                        queue.put_nowait(m)
                elif isinstance(m, SchedulerStatsMsg):
                    self.stats = m.stats
                    self.dashboard.observe_stats()

    async def watch_workers(self, on_death: Callable[[str], None], interval: float = 0.2) -> None:
        """Notice a dead worker: fail every waiting request (503) and tell the server to stop."""
        while self.dead_worker is None:
            await asyncio.sleep(interval)
            if self.shutting_down is not None:
                return  # we are stopping anyway: workers exiting now is expected
            for w in self.workers:
                if not w.process.is_alive():
                    if w.process.exitcode in (-signal.SIGTERM, -signal.SIGINT):
                        # SIGTERM sent to the whole process group (`timeout`, `kill -- -PGID`,
                        # systemd) reaches the workers and us at once: give our own handler a
                        # moment to say so before calling it a crash.
                        await asyncio.sleep(interval)
                        if self.shutting_down is not None:
                            return
                    self.dead_worker = w.describe_exit()
                    break
        self.fail_all(self.dead_worker)
        on_death(self.dead_worker)

    def fail_all(self, message: str) -> None:
        """Wake every waiting request with an error (its client gets a 503 or an error event)."""
        for uid, queue in list(self.ack_map.items()):
            queue.put_nowait(
                UserReply(uid=uid, incremental_output="", finished=True, finish_reason="abort", error=message)
            )

    def begin_shutdown(self) -> None:
        """Ctrl+C / SIGTERM: end open streams now instead of letting uvicorn cancel them later."""
        if self.shutting_down is None:
            self.shutting_down = "the server is shutting down"
            # No aborts needed: the scheduler is about to get an ExitMsg anyway.
            self.fail_all(self.shutting_down)

    def close(self) -> None:
        for q in self.send_tokenizer:
            q.close()
        self.recv_tokenizer.close()
        self.ctx.term()

    @contextlib.asynccontextmanager
    async def serving(self, on_death: Callable[[str], None]) -> AsyncIterator["FrontendState"]:
        """Run `listen` and the worker watch while the block runs; on the way out stop both and
        close the sockets. The HTTP server and the shell both serve inside one of these."""
        tasks = [asyncio.create_task(self.listen()), asyncio.create_task(self.watch_workers(on_death))]
        try:
            yield self
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.close()
