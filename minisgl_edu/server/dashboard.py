"""The live dashboard at /dashboard: what the server is doing while requests stream, in a browser.

Where this sits on the request path: beside it, in the API server process, read only. Nothing it
does reaches the scheduler, and the number of viewers changes nothing there:

    scheduler --SchedulerStatsMsg, after a change, at most every stats_interval--> detokenizer
        --> FrontendState.listen: state.stats (the latest one), Dashboard.observe_stats (counted)
    every UserReply in FrontendState.listen --> Dashboard.observe_reply: tokens, time to first
        token, inter-token latency, added up per second over the last minute (a ring of 60)
    browser --GET /dashboard--> dashboard.html (static), which polls GET /dashboard/state: the
        latest stats and the minute of history as JSON, built at most once per message and second
        however many viewers ask

What the page draws: the batch scheduled last (uid, prefill/decode, tokens), the waiting queue, the
running requests, the KV page map coloured by owner (free, held by the prefix cache), the prefix
cache's hits, and tokens/s, TTFT and ITL over the last minute. The scheduler's part of that is
`scheduler/stats.py`.

The API key: with `--api-key`, /dashboard and /dashboard/state need it like /v1 does. A browser
cannot send a header when it opens a URL, so the page is opened as `/dashboard?key=KEY`:
`DashboardKeyMiddleware` turns that query parameter into the `Authorization: Bearer KEY` header,
for the HTML page only, and `ApiKeyMiddleware` checks it as any other. The page then takes the key
out of the address bar (so it is not on the projector or in the history) and sends it as a Bearer
header on its fetches of /dashboard/state, which never accepts it in the URL. The key still
passes in that first URL: it can appear in a proxy's or the access log (`--log-level info`).
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import parse_qs

from minisgl_edu.message import UserReply

WINDOW_S = 60  # seconds of history the charts show
MAX_TRACKED = 10_000  # requests whose timings are followed at once (more: the oldest are dropped)
PAGE = Path(__file__).with_name("dashboard.html")
HTML_PATH = "/dashboard"


@dataclass
class Second:
    """What the API server saw in one second of its clock (`int(time.monotonic())`)."""

    t: int
    tokens: int = 0  # output tokens that arrived
    ttft_sum: float = 0.0  # over the requests whose first token arrived in this second
    ttft_n: int = 0
    itl_sum: float = 0.0  # over the tokens that arrived after their request's first one
    itl_n: int = 0


@dataclass
class Timing:
    """One request, as the API server sees its replies arrive."""

    started: float
    tokens: int = 0  # output tokens seen so far
    last: float = 0.0  # when the last of them arrived


class Dashboard:
    """The dashboard's state in the API server: a count of stats messages and one minute of
    per-second token and latency figures. Fed by `FrontendState`; read by the routes below."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.seconds: deque[Second] = deque(maxlen=WINDOW_S + 1)  # the current second + a full minute
        self.timings: dict[int, Timing] = {}  # uid -> its timing, until its last reply
        self.stats_received = 0
        self.stats_received_at: Optional[float] = None
        self._body_key: Optional[tuple] = None
        self._body = b""

    # ------------------------------------------------------------ fed by FrontendState
    def request_started(self, uid: int) -> None:
        self.timings[uid] = Timing(started=self.clock())
        while len(self.timings) > MAX_TRACKED:  # a request whose last reply never came (server failing)
            del self.timings[next(iter(self.timings))]

    def observe_reply(self, reply: UserReply) -> None:
        """Every reply that reaches the API server, also for a client that has left (its last
        reply ends the request's timing)."""
        timing = self.timings.get(reply.uid)
        if timing is None:
            return
        new = reply.num_output_tokens - timing.tokens
        if new > 0:
            now = self.clock()
            second = self._second(now)
            second.tokens += new
            if timing.tokens == 0:
                second.ttft_sum += now - timing.started
                second.ttft_n += 1
            else:
                # A reply may carry several tokens (the detokenizer holds back half a character):
                # each counts, with an equal share of the gap, as /metrics counts them.
                second.itl_sum += now - timing.last
                second.itl_n += new
            timing.tokens = reply.num_output_tokens
            timing.last = now
        if reply.finished or reply.error:
            del self.timings[reply.uid]

    def observe_stats(self) -> None:
        """A `SchedulerStatsMsg` arrived (FrontendState keeps it as `state.stats`)."""
        self.stats_received += 1
        self.stats_received_at = self.clock()

    def _second(self, now: float) -> Second:
        t = int(now)
        if not self.seconds or self.seconds[-1].t != t:
            self.seconds.append(Second(t))
        return self.seconds[-1]

    # ------------------------------------------------------------ read by the routes
    def history(self, now: float) -> dict:
        """The last WINDOW_S whole seconds, oldest first (None: nothing measured that second)."""
        end = int(now)  # the current second is still filling up: left out
        by_t = {s.t: s for s in self.seconds}
        rows = [by_t.get(t) for t in range(end - WINDOW_S, end)]
        return {
            "window_s": WINDOW_S,
            "tokens_per_s": [s.tokens if s else 0 for s in rows],
            "ttft_s": [s.ttft_sum / s.ttft_n if s and s.ttft_n else None for s in rows],
            "itl_s": [s.itl_sum / s.itl_n if s and s.itl_n else None for s in rows],
        }

    def state_body(self, stats: dict, in_flight: int) -> bytes:
        """The JSON of /dashboard/state, made again only when a stats message arrived, a second
        passed or the in-flight count changed: all viewers share one copy."""
        now = self.clock()
        key = (self.stats_received, int(now), in_flight)
        if key != self._body_key:
            age = None if self.stats_received_at is None else round(now - self.stats_received_at, 3)
            state = {
                "stats_received": self.stats_received,
                "stats_age_s": age,
                "in_flight": in_flight,
                "scheduler": stats,
                "history": self.history(now),
            }
            self._body = json.dumps(state, separators=(",", ":")).encode()
            self._body_key = key
        return self._body


class DashboardKeyMiddleware:
    """`GET /dashboard?key=KEY` -> the header `Authorization: Bearer KEY`, for the HTML page only.

    It runs before `ApiKeyMiddleware`, which then checks the key as on any route; a wrong key gets
    its 401. Every other path, /dashboard/state included, must send the header itself.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == HTML_PATH:
            headers = list(scope.get("headers") or [])
            keys = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("key")
            if keys and not any(name == b"authorization" for name, _ in headers):
                headers.append((b"authorization", f"Bearer {keys[0]}".encode("latin-1", "replace")))
                scope = dict(scope, headers=headers)
        await self.app(scope, receive, send)


# The page loads nothing from anywhere (no CDN, fonts or images: the machines may be offline) and
# talks only to this server; the browser enforces both.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}


def install_dashboard(app: Any, state: Any) -> None:
    """Add GET /dashboard (the page) and GET /dashboard/state (its JSON) to the API server's app.

    `state` is the `FrontendState`: its `stats` (the scheduler's latest), `ack_map` (requests in
    flight) and `dashboard` (a `Dashboard`).
    """
    from fastapi.responses import HTMLResponse, Response

    html = PAGE.read_text(encoding="utf-8")
    app.add_middleware(DashboardKeyMiddleware)  # added last, so it runs before the key check

    @app.get(HTML_PATH, include_in_schema=False)
    async def dashboard_page():
        return HTMLResponse(html, headers=PAGE_HEADERS)

    @app.get(HTML_PATH + "/state", include_in_schema=False)
    async def dashboard_state():
        body = state.dashboard.state_body(state.stats, len(state.ack_map))
        return Response(body, media_type="application/json", headers={"Cache-Control": "no-store"})
