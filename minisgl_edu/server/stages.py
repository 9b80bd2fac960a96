"""Where each request's first token waited: the API server's side of the stage stamps.

Where this sits on the request path: at both ends, in the API server process. `StampMiddleware`
notes when a request's headers are in (before its body is read and parsed); `generate()` starts
the request's stamps from that and sends them down the path with its `TokenizeMsg`; every process
adds its points (`message/stamps.py`); the first `UserReply` with text brings them back, and when
that text has been handed to the connection, `StageLog.record` keeps the whole path:

* GET /debug/stages: the latest `MAX_KEPT` requests' stamps, as JSON (what `bench/stages.py`
  fetches after a run to draw the timeline of a burst);
* /metrics: one histogram, `minisgl_first_token_stage_seconds{stage=...}`, of each stage's time.

It stays on: a dozen floats per request, read once; the tokens after the first carry nothing.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Optional

from prometheus_client import CollectorRegistry, Histogram

from minisgl_edu.message.stamps import POINTS, STAGES, Stamps, durations

MAX_KEPT = 4096  # requests whose stamps GET /debug/stages can return
SCOPE_KEY = "minisgl_received"  # where StampMiddleware leaves the time in the ASGI scope
STAGE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                 30.0, 60.0)  # fmt: skip


class StampMiddleware:
    """Plain ASGI: put `time.monotonic()` in the scope as soon as uvicorn hands a request over,
    so that reading and parsing the body count in the request's first stage."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope[SCOPE_KEY] = time.monotonic()
        await self.app(scope, receive, send)


def received_at(request: Any) -> float:
    """When `request` arrived (StampMiddleware's note, or now if it did not run: a test's app)."""
    scope = getattr(request, "scope", None) or {}
    return scope.get(SCOPE_KEY) or time.monotonic()


class StageLog:
    """The stamps of the latest requests, and a histogram of every stage on /metrics."""

    def __init__(self, registry: Optional[CollectorRegistry] = None, max_kept: int = MAX_KEPT) -> None:
        self.kept: deque[tuple[int, Stamps]] = deque(maxlen=max_kept)
        self.histogram = Histogram(
            "minisgl_first_token_stage_seconds",
            "Time a request spent in each stage of its path to the first token (message/stamps.py), in seconds.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=registry,
        )
        self._stage = {name: self.histogram.labels(name) for name, _, _ in STAGES}

    def record(self, uid: int, stamps: Stamps) -> None:
        self.kept.append((uid, stamps))
        for name, seconds in durations(stamps).items():
            self._stage[name].observe(max(seconds, 0.0))

    def as_json(self, last: Optional[int] = None) -> dict:
        """{"points", "stages", "requests": [{"uid", "stamps"}]}, oldest first; `last`: only the newest few."""
        kept = list(self.kept)
        if last is not None:
            kept = kept[-last:] if last > 0 else []
        return {
            "points": list(POINTS),
            "stages": [list(s) for s in STAGES],
            "requests": [{"uid": uid, "stamps": stamps} for uid, stamps in kept],
        }


def install_stages(app: Any, log: StageLog) -> None:
    """GET /debug/stages[?last=N]: the kept requests' stamps (seconds of `time.monotonic()`)."""

    @app.get("/debug/stages")
    async def debug_stages(last: Optional[int] = None):
        return log.as_json(last)
