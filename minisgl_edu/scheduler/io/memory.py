"""`SchedulerIO` over in-memory queues, for one process: the runtime, the offline `LLM`, tests.

Where this sits on the request path: in place of the sockets. A caller `put`s backend messages in
and `drain`s the scheduler's `DetokenizeMsg`s out.
"""

from __future__ import annotations

import queue

from minisgl_edu.message import BaseBackendMsg, DetokenizeMsg
from minisgl_edu.scheduler.io.base import SchedulerIO


class QueueIO(SchedulerIO):
    """In-memory queues, for one process (the runtime, the offline LLM, tests)."""

    def __init__(self, block_timeout: float = 0.05) -> None:
        self.inbox: queue.Queue[BaseBackendMsg] = queue.Queue()
        # One entry per step: that step's messages. A put takes a lock and wakes a waiter, which at a
        # decode batch of 256 costs more than the rest of the step's bookkeeping for a request.
        self.outbox: queue.Queue[list[DetokenizeMsg]] = queue.Queue()
        self.block_timeout = block_timeout

    def put(self, msg: BaseBackendMsg) -> None:
        self.inbox.put(msg)

    def recv(self, block: bool) -> list[BaseBackendMsg]:
        msgs: list[BaseBackendMsg] = []
        if block:
            try:
                msgs.append(self.inbox.get(timeout=self.block_timeout))
            except queue.Empty:
                return msgs
        while True:
            try:
                msgs.append(self.inbox.get_nowait())
            except queue.Empty:
                return msgs

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        if msgs:
            self.outbox.put(list(msgs))

    def drain(self) -> list[DetokenizeMsg]:
        out = []
        while True:
            try:
                out.extend(self.outbox.get_nowait())
            except queue.Empty:
                return out

    def num_pending(self) -> int:
        """Messages sent and not drained yet."""
        with self.outbox.mutex:
            return sum(len(step) for step in self.outbox.queue)
