"""An event log keyed by uid: which component did what to a request, and when.

Where this sits on the request path: everywhere. The API server, tokenizer, scheduler and
detokenizer each call `record(uid, component, event, ...)` as a request passes through them, so
the course can print one request's life from "received" to `[DONE]` (`summarize`; the figure is
`widgets/timeline.py`).

Events are plain data (`to_dict` / `from_dict`, JSON-safe), so the traces of several processes
can be sent over a socket or an HTTP endpoint and put back together with `merge`. Times come from
`time.time()`: unlike `perf_counter`, it is one clock for every process on the machine.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

# The order of the lanes in a timeline: the order a request meets the components.
COMPONENTS = ("api_server", "tokenizer", "scheduler", "engine", "detokenizer")


@dataclass
class TraceEvent:
    uid: int
    component: str  # "api_server" | "tokenizer" | "scheduler" | "engine" | "detokenizer"
    event: str  # e.g. "queued", "scheduled", "token", "finished"
    time: float  # seconds since the epoch (time.time())
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "component": self.component,
            "event": self.event,
            "time": self.time,
            "data": dict(self.data),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TraceEvent:
        return cls(int(d["uid"]), str(d["component"]), str(d["event"]), float(d["time"]), dict(d.get("data") or {}))

    def describe(self) -> str:
        """One line without the time, e.g. `scheduler    scheduled  phase=prefill batch=1` (stable
        from run to run, so notebooks can print it)."""
        extra = " ".join(f"{k}={v}" for k, v in self.data.items())
        return f"{self.component:<12} {self.event:<18} {extra}".rstrip()


class Tracer:
    """Collects events in memory. Thread-safe: the runtime's background loop writes from a thread."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._events: list[TraceEvent] = []
        self._lock = threading.Lock()

    def record(self, uid: int, component: str, event: str, **data: Any) -> None:
        if not self.enabled:
            return
        ev = TraceEvent(uid, component, event, time.time(), data)
        with self._lock:
            self._events.append(ev)

    def extend(self, events: Iterable[TraceEvent | dict]) -> None:
        """Add events recorded elsewhere (another process sent them as dicts)."""
        evs = [e if isinstance(e, TraceEvent) else TraceEvent.from_dict(e) for e in events]
        with self._lock:
            self._events.extend(evs)

    def events(self, uid: int | None = None) -> list[TraceEvent]:
        with self._lock:
            return [e for e in self._events if uid is None or e.uid == uid]

    def to_json(self, uid: int | None = None) -> str:
        return json.dumps([e.to_dict() for e in self.events(uid)])

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


NULL_TRACER = Tracer(enabled=False)


def merge(*traces: Iterable[TraceEvent | dict]) -> list[TraceEvent]:
    """One list, in time order, from the events of several components or processes.

    The sort is stable, so two events with the same timestamp keep the order they had in their
    own trace (one component's events are always in the order it recorded them).
    """
    out: list[TraceEvent] = []
    for trace in traces:
        out.extend(e if isinstance(e, TraceEvent) else TraceEvent.from_dict(e) for e in trace)
    return sorted(out, key=lambda e: e.time)


def _per_token(e: TraceEvent) -> bool:
    """Events that repeat once per generated token (the decode step and the token's trip back)."""
    if e.event == "scheduled":
        return e.data.get("phase") == "decode"
    return e.event in ("token", "DetokenizeMsg sent", "UserReply sent") and not e.data.get("finished")


def summarize(events: list[TraceEvent], max_tokens: int = 3) -> list[str]:
    """The events as lines without times, showing the per-token events of only the first
    `max_tokens` tokens of each request: a 100-token answer would otherwise bury the rest."""
    lines: list[str] = []
    tokens: dict[int, int] = {}
    hidden: dict[int, int] = {}
    for e in events:
        if _per_token(e) and tokens.get(e.uid, 0) >= max_tokens:
            if e.event == "token":
                hidden[e.uid] = hidden.get(e.uid, 0) + 1
            continue
        if e.event == "token":
            tokens[e.uid] = tokens.get(e.uid, 0) + 1
        if hidden.get(e.uid):
            n = hidden.pop(e.uid)
            lines.append(f"{'':<12} ... the same per-token events for {n} more token{'s' if n > 1 else ''}")
        lines.append(e.describe())
    return lines
