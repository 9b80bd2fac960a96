"""The live dashboard: the scheduler's snapshot, the API server's minute of history, /dashboard.

In process (fast): the page map the scheduler sends says the same owner for every page as the
notebook's page-map widget; stats go out only after a change and at most once per interval; the
API server's per-second TTFT / ITL / tokens; the `?key=` handling in front of the API-key check.

Against the real CPU server (slow, one server for the module, with an API key, the small KV
cache of tests/test_server.py): the state while 8 streams run and after some are cut, the key on
/dashboard and /dashboard/state, the number of state messages over a run, and the page itself in
Chromium (the harness of tests/test_browser.py), with a screenshot for the README.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from live_server import chat_body, running
from test_browser import CHROMIUM_ARGS, README_IMAGES, find_chromium

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import UserReply
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig
from minisgl_edu.server.dashboard import PAGE, WINDOW_S, Dashboard, install_dashboard

API_KEY = "dash-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
SETTLE_S = 90  # generous: the whole server runs on 2 shared cores


def expand(runs: list) -> list[tuple[int, int]]:
    """The run-length encoded page map -> (owner, cached) per page."""
    pages = []
    for owner, cached, n in runs:
        assert n > 0
        pages += [(owner, cached)] * n
    return pages


def owners(runs: list) -> dict[int, int]:
    """uid -> pages whose owner it is."""
    out: dict[int, int] = {}
    for owner, _, n in runs:
        if owner >= 0:
            out[owner] = out.get(owner, 0) + n
    return out


# ---------------------------------------------------------------- in process: the scheduler's side


def tiny_scheduler(tiny_model_dir, io=None, **kw) -> Scheduler:
    cfg = dict(model=tiny_model_dir, device="cpu", page_size=4, num_pages=64, max_prefill_tokens=256)
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg), io)


def test_page_map_has_the_widgets_owner_for_every_page(tiny_model_dir):
    from minisgl_edu.widgets.pagemap import page_users

    s = tiny_scheduler(tiny_model_dir)
    shared = list(range(100, 130))  # 7 whole pages of 4 tokens, then 2 tokens
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    s.add_request(0, shared + [7], params)
    s.run_until_idle()  # uid 0 finished: its full pages are now in the prefix cache
    s.add_request(1, shared + [8, 9], params)
    s.add_request(2, shared + [5], params)
    s.add_request(3, [3000 + i for i in range(9)], params)
    s.step()  # one prefill batch: uids 1 and 2 both hold the cached prefix pages
    snap = s.cache.snapshot()
    users = page_users(snap)
    detail = s.stats().detail
    pages = expand(detail.pages)
    assert len(pages) == s.cache.num_pages
    assert pages == [(u[0] if u else -1, int(c)) for u, c in zip(users, snap.cached)]
    assert any(len(u) == 2 and c for u, c in zip(users, snap.cached))  # the case of the smallest uid
    assert all(a[:2] != b[:2] for a, b in zip(detail.pages, detail.pages[1:]))  # runs are maximal
    # The other fields say the same as the scheduler's own structures.
    assert detail.running == [1, 2, 3] and detail.waiting == []  # each prompt in one chunk
    by_uid = {r[0]: r for r in detail.requests}
    assert by_uid[1][3] == by_uid[2][3] == 28 and by_uid[3][3] == 0  # prefix-cache hit tokens
    assert {uid: n for uid, n in owners(detail.pages).items()} == {
        uid: len([u for u in users if u and u[0] == uid]) for uid in (1, 2, 3)
    }
    assert detail.batch_phase == "prefill"
    assert detail.batch == [(1, "prefill", 28, 4), (2, "prefill", 28, 3), (3, "prefill", 0, 9)]
    assert detail.prefix_hit_tokens_total == 56 and detail.prompt_tokens_total == 31 + 32 + 31 + 9


class CountingIO(QueueIO):
    """The in-memory IO, keeping every stats message it is given."""

    wants_stats = True

    def __init__(self) -> None:
        super().__init__()
        self.sent: list = []

    def send_stats(self, stats) -> None:
        self.sent.append(stats)


def test_stats_go_out_after_a_change_and_at_most_once_per_interval(tiny_model_dir):
    params = SamplingParams(max_tokens=5, ignore_eos=True)
    # An interval longer than the run: one message, the first, whatever the number of steps.
    s = tiny_scheduler(tiny_model_dir, CountingIO(), stats_interval=3600.0)
    for uid in range(3):
        s.add_request(uid, [200 + uid + i for i in range(10)], params)
    steps = s.run_until_idle()
    assert len(steps) >= 5 and len(s.io.sent) == 1 and s.io.sent[0].detail.seq == 1

    # No interval: a message after a step that changed something, none while nothing changes.
    s = tiny_scheduler(tiny_model_dir, CountingIO(), stats_interval=0.0)
    for uid in range(3):
        s.add_request(uid, [300 + uid + i for i in range(10)], params)
    s.run_until_idle()
    deadline = time.monotonic() + 30  # the cost budget may space the last ones out a little
    while not (s.io.sent and s.io.sent[-1].running_requests == 0) and time.monotonic() < deadline:
        s.step()  # idle: nothing to run, but a pending change still goes out
    sent = len(s.io.sent)
    assert 1 <= sent <= s.batch_count
    assert [m.detail.seq for m in s.io.sent] == list(range(1, sent + 1))
    last = s.io.sent[-1]
    assert last.waiting_requests == 0 and last.detail.requests == [] and owners(last.detail.pages) == {}
    s.stats_pacer.next_at = 0.0  # even with the interval over: nothing changed, so nothing is sent
    for _ in range(5):
        s.step()
    assert len(s.io.sent) == sent


def test_a_pause_while_the_stats_are_built_does_not_hold_back_the_next_ones(tiny_model_dir):
    """The next message waits for the cost of the last one over STATS_BUDGET: the cost in this
    thread's CPU time. A scheduler that was paused meanwhile (SIGSTOP, as tests/test_reliability_faults.py
    does, or a core taken by other work) did no work in that time; counted as cost, a 0.5 s
    pause would hold back every stats message for 25 s (0.5 / 0.02), and /metrics with them."""

    class PausedWhileSending(CountingIO):
        def send_stats(self, stats) -> None:
            time.sleep(0.5)  # off the CPU, as a stopped process is
            super().send_stats(stats)

    s = tiny_scheduler(tiny_model_dir, PausedWhileSending(), stats_interval=0.25)
    s.add_request(0, list(range(200, 210)), SamplingParams(max_tokens=2, ignore_eos=True))
    before = time.monotonic()
    s.step()
    assert len(s.io.sent) == 1
    # 0.25 s of interval plus 50 times the CPU time of one message: far below 25 s on any machine.
    assert s.stats_pacer.next_at - before < 10.0, s.stats_pacer.next_at - before


# ---------------------------------------------------------------- in process: the API server's side


def test_history_has_ttft_itl_and_tokens_per_second():
    clock = SimpleNamespace(t=100.0)
    d = Dashboard(clock=lambda: clock.t)
    d.request_started(7)
    steps = [
        (100.5, UserReply(7, "", False, num_prompt_tokens=12)),  # the tokenizer's: no token yet
        (101.2, UserReply(7, "Hi", False, num_output_tokens=1)),  # first token: TTFT 1.2 s
        (101.6, UserReply(7, " there", False, num_output_tokens=3)),  # 2 tokens in 0.4 s: 0.2 s each
        (102.1, UserReply(7, "!", True, finish_reason="stop", num_output_tokens=4)),  # 1 token in 0.5 s
    ]
    for t, reply in steps:
        clock.t = t
        d.observe_reply(reply)
    assert 7 not in d.timings  # the last reply ends its timing
    d.observe_reply(UserReply(8, "x", False, num_output_tokens=1))  # not started here: ignored
    h = d.history(now=103.5)  # whole seconds 43 .. 102
    assert len(h["tokens_per_s"]) == WINDOW_S and h["tokens_per_s"][-2:] == [3, 1]
    assert h["ttft_s"][-2] == pytest.approx(1.2) and h["ttft_s"][-1] is None
    assert h["itl_s"][-2] == pytest.approx(0.2) and h["itl_s"][-1] == pytest.approx(0.5)
    assert sum(h["tokens_per_s"]) == 4 and sum(v is not None for v in h["ttft_s"]) == 1
    assert sum(d.history(now=103.5 + WINDOW_S)["tokens_per_s"]) == 0  # a minute later: gone

    # One JSON body for every viewer until something changes.
    body = d.state_body({"running_requests": 0}, in_flight=0)
    assert d.state_body({"running_requests": 0}, in_flight=0) is body
    d.observe_stats()
    assert json.loads(d.state_body({"running_requests": 1}, in_flight=0))["stats_received"] == 1


def test_key_in_the_query_opens_the_page_only():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from minisgl_edu.server.limits import ApiKeyMiddleware

    app = FastAPI()
    app.add_middleware(ApiKeyMiddleware, api_key=API_KEY)
    state = SimpleNamespace(stats={"kv_pages_total": 8}, ack_map={}, dashboard=Dashboard())
    install_dashboard(app, state)
    with TestClient(app) as c:
        assert c.get("/dashboard").status_code == 401
        assert c.get("/dashboard?key=wrong").status_code == 401
        page = c.get(f"/dashboard?key={API_KEY}")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer" and API_KEY not in page.text
        assert c.get(f"/dashboard/state?key={API_KEY}").status_code == 401  # a header, never the URL
        assert c.get(f"/v1/models?key={API_KEY}").status_code == 401
        r = c.get("/dashboard/state", headers=AUTH)
        assert r.status_code == 200 and r.json()["scheduler"] == {"kv_pages_total": 8}


def test_page_is_self_contained_with_the_widgets_colours():
    from minisgl_edu.widgets.common import PALETTE

    html = PAGE.read_text()
    palette = re.search(r"const PALETTE = (\[[^\]]*\])", html).group(1)
    assert json.loads(palette) == PALETTE
    # Nothing from elsewhere: no script, style, font or image from a URL (the machines are offline).
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//|@import|url\(\s*["']?(https?:)?//""", html)


# ---------------------------------------------------------------- the real server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(tmp_path_factory.mktemp("dashboard"), api_key=API_KEY) as srv:
        yield srv


def state_of(server) -> dict:
    r = httpx.get(server.url + "/dashboard/state", headers=AUTH, timeout=10)
    assert r.status_code == 200
    return r.json()


def wait_state(server, predicate, what: str, timeout: float = SETTLE_S) -> dict:
    deadline = time.monotonic() + timeout
    state = state_of(server)
    while not predicate(state):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s; the state: {json.dumps(state)[:3000]}")
        time.sleep(0.1)
        state = state_of(server)
    return state


def settled(state: dict) -> bool:
    """Nothing anywhere: no request in the scheduler or the API server, no page owned by anyone."""
    s, d = state["scheduler"], state["scheduler"]["detail"]
    return (
        state["in_flight"] == 0
        and not d["running"]
        and not d["waiting"]
        and not d["requests"]
        and not owners(d["pages"])
        and s["kv_pages_free"] == s["kv_pages_total"]
    )


class Streams:
    """Streaming chat requests sent at once from a thread of their own. A request whose `cut` is
    set is closed by its client once `stop` is set, after its first content (an abort)."""

    def __init__(self, server, bodies: list[dict], cut: list[bool]) -> None:
        self.server, self.bodies, self.cut = server, bodies, cut
        self.stop = threading.Event()
        self.results: list = [None] * len(bodies)
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()

    async def _one(self, c: httpx.AsyncClient, i: int) -> None:
        try:
            async with c.stream("POST", "/v1/chat/completions", json=self.bodies[i]) as r:
                if r.status_code != 200:
                    self.results[i] = f"status {r.status_code}"
                    return
                async for line in r.aiter_lines():
                    if line == "data: [DONE]":
                        self.results[i] = "done"
                        return
                    if self.cut[i] and self.stop.is_set() and '"content"' in line:
                        self.results[i] = "cut"
                        return  # leaving the block closes the connection: the server aborts it
        except Exception as e:  # reported by the test
            self.results[i] = f"{type(e).__name__}: {e}"

    async def _main(self) -> None:
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(base_url=self.server.url, headers=AUTH, timeout=120, limits=limits) as c:
            await asyncio.gather(*(self._one(c, i) for i in range(len(self.bodies))))

    def join(self, timeout: float = SETTLE_S) -> list:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"streams still running after {timeout} s: {self.results}"
        return self.results


LONG = chat_body("Write a very long essay about the sea.", max_tokens=300, temperature=0, ignore_eos=True, stream=True)


def short(i: int) -> dict:
    return chat_body(f"Say hello to {i}.", max_tokens=6, temperature=0, ignore_eos=True, stream=True)


@pytest.mark.slow
@pytest.mark.timeout(180, func_only=True)
def test_state_follows_8_streams_and_their_aborts(server):
    start = wait_state(server, settled, "idle before the test")
    # Four long streams take the four running slots (--max-running-requests 4); four short ones,
    # sent once those run, wait behind them. The long ones are then cut: aborted while decoding.
    long_streams = Streams(server, [LONG] * 4, cut=[True] * 4)
    wait_state(server, lambda s: len(s["scheduler"]["detail"]["running"]) == 4, "4 streams running")
    short_streams = Streams(server, [short(i) for i in range(4)], cut=[False] * 4)
    during = wait_state(
        server, lambda s: len(s["scheduler"]["detail"]["waiting"]) == 4, "4 streams running and 4 waiting"
    )
    d = during["scheduler"]["detail"]
    running, waiting = d["running"], d["waiting"]
    assert len(running) == 4 and not set(running) & set(waiting)
    assert {r[0] for r in d["requests"]} == set(running) | set(waiting)
    held = owners(d["pages"])
    assert set(held) == set(running)  # every running request holds pages; a waiting one none yet
    pages_of = {r[0]: r[6] for r in d["requests"]}
    assert all(held[uid] == pages_of[uid] for uid in running)
    assert all(pages_of[uid] == 0 for uid in waiting)
    assert {it[0] for it in d["batch"]} <= set(running)
    assert during["in_flight"] == 8

    long_streams.stop.set()
    assert long_streams.join() == ["cut"] * 4
    assert short_streams.join() == ["done"] * 4
    end = wait_state(server, settled, "every page back to free or cached")
    d_end = end["scheduler"]["detail"]
    was_held = {i for i, (o, _) in enumerate(expand(d["pages"])) if o >= 0}
    assert all(expand(d_end["pages"])[i][0] == -1 for i in was_held)
    assert d_end["steps"] > d["steps"] and end["scheduler"]["generated_tokens_total"] > 0
    # The server counted what the clients saw: tokens in the last minute, and first tokens.
    history = wait_state(server, lambda s: sum(s["history"]["tokens_per_s"]) > 0, "tokens in the history")["history"]
    assert any(v is not None for v in history["ttft_s"]) and any(v is not None for v in history["itl_s"])
    assert end["stats_received"] > start["stats_received"]


@pytest.mark.slow
@pytest.mark.timeout(60, func_only=True)
def test_dashboard_needs_the_api_key(server):
    assert httpx.get(server.url + "/dashboard").status_code == 401
    assert httpx.get(server.url + "/dashboard/state").status_code == 401
    assert httpx.get(server.url + "/dashboard?key=wrong").status_code == 401
    assert httpx.get(server.url + f"/dashboard/state?key={API_KEY}").status_code == 401
    r = httpx.get(server.url + "/dashboard/state", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    page = httpx.get(server.url + f"/dashboard?key={API_KEY}")
    assert page.status_code == 200 and "<title>minisgl_edu" in page.text
    assert httpx.get(server.url + "/dashboard", headers=AUTH).status_code == 200
    assert httpx.get(server.url + "/health").status_code == 200  # still public


@pytest.mark.slow
@pytest.mark.timeout(180, func_only=True)
def test_state_messages_are_bounded_by_steps_and_interval_not_by_viewers(server):
    """Over a run watched by several busy viewers, the scheduler's messages (counted by the
    scheduler, `seq`, and by the API server) are at most one per step that changed something
    and one per `min_interval` of the scheduler's own clock."""
    start = wait_state(server, settled, "idle before the test")
    stop = threading.Event()
    reads = [0] * 2

    def viewer(i: int) -> None:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as c:
            while not stop.is_set():
                assert c.get("/dashboard/state").status_code == 200
                reads[i] += 1
                time.sleep(0.02)

    viewers = [threading.Thread(target=viewer, args=(i,), daemon=True) for i in range(2)]
    for v in viewers:
        v.start()
    streams = Streams(server, [short(i) for i in range(3)] + [short(9)], cut=[False] * 4)
    assert streams.join() == ["done"] * 4
    end = wait_state(server, settled, "idle after the run")
    stop.set()
    for v in viewers:
        v.join(10)
    a, b = start["scheduler"]["detail"], end["scheduler"]["detail"]
    pushed, steps = b["seq"] - a["seq"], b["steps"] - a["steps"]
    # Each message follows a change, and here (no abort) every change comes with a step.
    assert steps > 0 and 0 < pushed <= steps
    assert (pushed - 1) * b["min_interval"] <= b["time"] - a["time"] + 1e-6
    # Every message reached the API server, once; the viewers' many reads made none.
    assert end["stats_received"] - start["stats_received"] == pushed
    assert end["stats_received"] == b["seq"]
    assert sum(reads) > pushed


@pytest.mark.slow
@pytest.mark.timeout(240, func_only=True)
def test_dashboard_in_chromium(server, tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (`pip install -e '.[dev]'` installs it)")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium binary: `bash scripts/install_browser.sh`, or set MINISGL_CHROMIUM")
    wait_state(server, settled, "idle before the test")
    # A shared system prompt, cached by one request first: all 8 then start with a prefix hit
    # (pages held by a request and the prefix cache at once), four run and four wait.
    system = "You are a patient teacher. Answer in one short sentence, in plain words, for a student. " * 3
    body = lambda i, n: {
        "model": "smollm2-135m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": f"What is {i} + {i}?"}],
        "max_tokens": n,
        "temperature": 0,
        "ignore_eos": True,
    }
    r = httpx.post(server.url + "/v1/chat/completions", json=body(0, 2), headers=AUTH, timeout=60)
    assert r.status_code == 200
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 980})
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{server.url}/dashboard?key={API_KEY}")
            assert "key=" not in page.url  # out of the address bar at once
            # The state came in. Polled through page.evaluate: wait_for_function's own polling evaluates a
            # string inside the page, which the dashboard's CSP (no 'unsafe-eval') refuses whenever the
            # first look finds the state not there yet.
            deadline = time.monotonic() + SETTLE_S
            while not page.evaluate("document.body.dataset.updates !== undefined"):
                assert time.monotonic() < deadline, f"the dashboard's state did not come in within {SETTLE_S} s"
                page.wait_for_timeout(100)
            # Four long streams run (cut at the end), four short ones wait behind them, then finish.
            running = Streams(server, [{**body(i, 200), "stream": True} for i in range(1, 5)], cut=[True] * 4)
            first = wait_page(page, lambda v: len(v["rows"]) == 4 and len(v["owners"]) == 4, "4 requests running")
            queued = Streams(server, [{**body(i, 8), "stream": True} for i in range(5, 9)], cut=[False] * 4)
            during = wait_page(page, lambda v: len(v["waiting"]) == 4 and len(v["rows"]) == 8, "4 more waiting")
            assert set(during["owners"]) == set(first["rows"])  # pages held by the running requests
            assert set(during["waiting"]) == set(during["rows"]) - set(first["rows"])
            assert during["shared"] > 0  # the system prompt's pages: held and in the prefix cache
            save(page, shots / "dashboard.png")
            running.stop.set()
            assert running.join() == ["cut"] * 4
            assert queued.join() == ["done"] * 4
            after = wait_page(page, lambda v: not v["rows"] and not v["owners"], "every page free again")
            assert after["cached"] > 0  # the finished requests' pages stay in the prefix cache
            save(page, shots / "dashboard_after.png")
            assert not errors, errors  # a blocked resource (the page's CSP) would show here
        finally:
            browser.close()


JS_PAGE_VIEW = """() => ({
    rows: [...document.querySelectorAll('#requests tbody tr')].map(r => +r.dataset.uid),
    waiting: [...document.querySelectorAll('#queue [data-uid]')].map(e => +e.dataset.uid),
    owners: [...new Set([...document.querySelectorAll('#pages .pg')].map(e => +e.dataset.owner)
        .filter(o => o >= 0))],
    shared: document.querySelectorAll('#pages .pg.cached:not(.nobody)').length,
    cached: document.querySelectorAll('#pages .pg.cached').length,
})"""


def wait_page(page, predicate, what: str, timeout: float = SETTLE_S) -> dict:
    """Poll what the page shows (requests table, queue, page map) until `predicate` holds."""
    deadline = time.monotonic() + timeout
    view = page.evaluate(JS_PAGE_VIEW)
    while not predicate(view):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not shown within {timeout} s; the page shows {view}")
        page.wait_for_timeout(100)
        view = page.evaluate(JS_PAGE_VIEW)
    return view


def save(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    if os.environ.get("MINISGL_README_IMAGES") == "1" and path.name == "dashboard.png":
        README_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, README_IMAGES / path.name)
