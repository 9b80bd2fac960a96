"""The scheduler's ZeroMQ connection: `SchedulerIO` over sockets, for the server's scheduler process.

Where this sits on the request path: inside `minisgl-TP0-scheduler`, between the tokenizer
workers and the detokenizer. The scheduler itself only knows the `SchedulerIO` protocol
(`recv`, `send`, `send_stats`); the in-process runtime plugs in memory queues instead, so the
scheduling code is the same in a notebook and in the server.

Two details the server needs beyond passing messages:

* `recv(block=True)` waits at most `poll_interval` seconds and then returns `[]`, so that the
  loop can notice when the main process has gone away (then it returns an `ExitMsg`). That
  wake-up is also when an idle scheduler sends its last stats (`Scheduler.send_stats`):
  after an abort or a finish it takes no more steps, and /metrics and /dashboard would otherwise
  keep showing the request.
* Stats go out as one `SchedulerStatsMsg` each, to the detokenizer, which passes them on to the
  API server. When and how often is the scheduler's decision (`scheduler/stats.py`), not this
  class's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from minisgl_edu.message import BaseBackendMsg, BatchTokenizerMsg, DetokenizeMsg, ExitMsg, SchedulerStatsMsg
from minisgl_edu.scheduler.io.base import SchedulerIO


class ZmqSchedulerIO(SchedulerIO):
    def __init__(
        self,
        recv_addr: str,
        send_addr: str,
        poll_interval: float = 0.5,
        parent_alive: Callable[[], bool] = lambda: True,
    ) -> None:
        import zmq

        from minisgl_edu.message.ipc import ZmqPullQueue, ZmqPushQueue

        self.ctx = zmq.Context()
        self.recv_backend = ZmqPullQueue(self.ctx, recv_addr, bind=True)
        self.send_detokenizer = ZmqPushQueue(self.ctx, send_addr)
        self.poll_interval = poll_interval
        self.parent_alive = parent_alive

    def recv(self, block: bool) -> list[BaseBackendMsg]:
        if block:
            first = self.recv_backend.get(timeout=self.poll_interval)
            if first is None:
                return [] if self.parent_alive() else [ExitMsg()]
            msgs = [first] + self.recv_backend.get_all_nowait()
        else:
            msgs = self.recv_backend.get_all_nowait()
        return msgs

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        if not msgs:
            return
        self.send_detokenizer.put(msgs[0] if len(msgs) == 1 else BatchTokenizerMsg(data=list(msgs)))

    wants_stats = True

    def send_stats(self, stats: Any) -> None:
        self.send_detokenizer.put(SchedulerStatsMsg(stats=dataclasses.asdict(stats)))

    def close(self) -> None:
        self.recv_backend.close()
        self.send_detokenizer.close()
        self.ctx.term()
