"""An event log keyed by uid: which component did what to a request, and when.

Where this sits on the request path: everywhere. The API server, tokenizer, scheduler and
detokenizer each call `record(uid, component, event, ...)` as a request passes through them, so
the course can print (and plot) one request's life from "received" to `[DONE]`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TraceEvent:
    uid: int
    component: str  # "api_server" | "tokenizer" | "scheduler" | "engine" | "detokenizer"
    event: str  # e.g. "queued", "scheduled", "token", "finished"
    time: float  # seconds, time.perf_counter() clock
    data: dict[str, Any] = field(default_factory=dict)


class Tracer:
    """Collects events in memory. Thread-safe: the runtime's background loop writes from a thread."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._events: list[TraceEvent] = []
        self._lock = threading.Lock()

    def record(self, uid: int, component: str, event: str, **data: Any) -> None:
        if not self.enabled:
            return
        ev = TraceEvent(uid, component, event, time.perf_counter(), data)
        with self._lock:
            self._events.append(ev)

    def events(self, uid: int | None = None) -> list[TraceEvent]:
        with self._lock:
            return [e for e in self._events if uid is None or e.uid == uid]

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


NULL_TRACER = Tracer(enabled=False)
