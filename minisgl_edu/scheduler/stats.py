"""What the scheduler tells the API server about itself: one `SchedulerStats` a few times a second.

Where this sits on the request path: beside it. After each step, and each time it wakes up idle,
the scheduler calls `send_stats`, which asks its `StatsPacer`. When something changed since the
last message and that message is at least `config.stats_interval` old, it builds one
`SchedulerStats` (`collect_stats`) and sends it as a `SchedulerStatsMsg` through the detokenizer to
the API server. There the gauges become /metrics (`server/metrics.py`), and `detail` becomes the
live page at /dashboard (`server/dashboard.py`).

The rate is bounded by the scheduler, whatever the number of tokens or viewers: at most one
message per `stats_interval`, none while nothing changes, and never more than `STATS_BUDGET` of
the scheduler's time spent building them (a huge KV cache makes its page map slower to build; then
the messages are spaced out further).
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from minisgl_edu.core import Batch, Req
from minisgl_edu.kvcache import CacheManager, PageMapSnapshot
from minisgl_edu.scheduler.config import SchedulerConfig
from minisgl_edu.scheduler.speculator import Speculator


class StatsSource(Protocol):
    """What the stats read of the scheduler (the `Scheduler` is one)."""

    config: SchedulerConfig
    reqs: dict[int, Req]
    waiting: deque[Req]
    running: list[Req]
    cache: CacheManager
    speculator: Speculator
    last_batch: Optional[Batch]  # the batch scheduled last
    batch_count: int
    generated_tokens_total: int
    prefix_hit_tokens_total: int
    prompt_tokens_total: int
    stats_pacer: StatsPacer


STATS_BUDGET = 0.02  # the largest share of the scheduler's time that building stats may take
MAX_LISTED = 256  # waiting requests listed one by one (the gauge still counts all of them)


@dataclass
class StatsDetail:
    """What /dashboard draws beyond the gauges. Plain tuples rather than objects: it goes over
    the wire several times a second, and a request or a page is a few numbers."""

    seq: int  # stats messages sent so far, this one included (0: made at start-up, not sent)
    time: float  # time.monotonic() of the scheduler when it was made
    min_interval: float  # seconds at least between two messages (config.stats_interval)
    steps: int  # batches scheduled so far
    page_size: int
    # The batch scheduled last (it has just run; under the overlap loop it is still running).
    batch_id: int  # 0: none yet
    batch_phase: str  # "prefill" | "decode" | "mixed" | "verify"; "" before the first batch
    # (uid, "prefill" | "decode" | "verify", start position, tokens computed); a request that
    # verifies drafts computes its newest token and the drafts: 1 + drafts tokens
    batch: list[tuple[int, str, int, int]]
    waiting: list[int]  # uids in the waiting queue, head first (the first MAX_LISTED)
    running: list[int]  # uids decoding
    # Each running request, then each listed waiting one:
    # (uid, status, prompt tokens, prefix-cache hit tokens, tokens with K/V computed, output tokens, pages held)
    requests: list[tuple[int, str, int, int, int, int, int]]
    pages: list[tuple[int, int, int]]  # the page map, run-length encoded: see `page_runs`
    prefix_hit_tokens_total: int  # prompt tokens served from the prefix cache since start-up
    prompt_tokens_total: int  # prompt tokens of the requests admitted since start-up


@dataclass
class SchedulerStats:
    """The scheduler's gauges (what /metrics serves) and the detail /dashboard draws."""

    kv_pages_total: int
    kv_pages_free: int
    kv_pages_cached: int
    running_requests: int
    waiting_requests: int
    generated_tokens_total: int
    # Speculative decoding (all 0 and [] when it is off): drafts proposed and accepted, and each
    # request's verifies by outcome, spec_verify_outcomes[d][a] = verifies of d drafts that accepted
    # a (the histograms of /metrics are built from it).
    spec_draft_tokens_total: int
    spec_accepted_tokens_total: int
    spec_verify_outcomes: list[list[int]]
    detail: StatsDetail


def page_runs(pages: PageMapSnapshot) -> list[tuple[int, int, int]]:
    """The page map of `CacheManager.snapshot()` as runs of equal pages, in page order.

    Each run is (owner, cached, number of pages): `owner` is the uid whose page-table row holds
    the page (-1: none; several rows, a shared prefix: the smallest uid, the one the notebook's
    page map colours it with, `widgets.pagemap.page_users`), `cached` is 1 if the prefix cache
    holds the page. So a free page is (-1, 0), a page only the cache keeps is (-1, 1). A cache
    of 100,000 pages with a few requests is a handful of runs; numpy keeps the scan fast.
    """
    import numpy as np

    owner = np.full(pages.num_pages, -1, dtype=np.int64)
    for uid, row in sorted(pages.rows.items(), reverse=True):  # the smallest uid is written last
        owner[row] = uid
    cached = np.asarray(pages.cached, dtype=np.int64)
    # A run starts at page 0 and wherever the owner or the cached flag differs from the page before.
    starts_run = np.ones(pages.num_pages, dtype=bool)
    starts_run[1:] = (owner[1:] != owner[:-1]) | (cached[1:] != cached[:-1])
    starts = np.flatnonzero(starts_run)
    ends = np.append(starts[1:], pages.num_pages)
    return [(int(owner[s]), int(cached[s]), int(e - s)) for s, e in zip(starts, ends)]


def change_key(s: StatsSource) -> tuple:
    """Numbers that differ whenever anything a viewer sees has changed (a step, a new request, an
    abort): two equal keys mean the last message is still up to date."""
    return (
        s.batch_count,
        len(s.reqs),
        len(s.waiting),
        len(s.running),
        s.cache.num_free,
        s.cache.prefix_cache.num_cached,
        s.generated_tokens_total,
    )


def collect_stats(s: StatsSource) -> SchedulerStats:
    cache = s.cache
    listed = list(itertools.islice(s.waiting, MAX_LISTED))
    batch = s.last_batch
    items: list[tuple[int, str, int, int]] = []
    if batch is not None:
        for it in batch.items:
            phase = "verify" if it.draft else "decode" if it.is_decode else "prefill"
            items.append((it.req.uid, phase, it.start, it.num_tokens))
    requests = [
        (
            r.uid,
            r.status.value,
            len(r.input_ids),
            r.prefix_len,
            r.cached_len,
            len(r.output_ids),
            cache.held_pages(r),
        )
        for r in s.running + listed
    ]
    detail = StatsDetail(
        seq=s.stats_pacer.sent,
        time=time.monotonic(),
        min_interval=s.config.stats_interval,
        steps=s.batch_count,
        page_size=cache.page_size,
        batch_id=batch.batch_id if batch is not None else 0,
        batch_phase=batch.phase if batch is not None else "",
        batch=items,
        waiting=[r.uid for r in listed],
        running=[r.uid for r in s.running],
        requests=requests,
        pages=page_runs(cache.snapshot()),
        prefix_hit_tokens_total=s.prefix_hit_tokens_total,
        prompt_tokens_total=s.prompt_tokens_total,
    )
    return SchedulerStats(
        kv_pages_total=cache.num_pages,
        # Free for new work: the free list plus cached pages that no running request uses.
        kv_pages_free=cache.num_available,
        kv_pages_cached=cache.prefix_cache.num_cached,
        running_requests=len(s.running),
        waiting_requests=len(s.waiting),
        generated_tokens_total=s.generated_tokens_total,
        spec_draft_tokens_total=s.speculator.draft_tokens_total,
        spec_accepted_tokens_total=s.speculator.accepted_tokens_total,
        spec_verify_outcomes=[list(row) for row in s.speculator.verify_outcomes] if s.speculator.enabled else [],
        detail=detail,
    )


class StatsPacer:
    """When the scheduler's next stats message may go out, and how many went out (the `seq` of
    each message's detail)."""

    def __init__(self) -> None:
        self.sent = 0
        self.key_sent: Optional[tuple] = None  # change_key() when the last one was sent
        self.next_at = 0.0  # time.monotonic() before which no message goes out

    def send_if_due(self, s: StatsSource, send: Callable[[SchedulerStats], None]) -> None:
        """Send `collect_stats(s)` if the interval is over and anything changed since the last.

        If building the message took more than STATS_BUDGET of the interval (a huge KV cache),
        the next one waits longer: the stats never slow the scheduler down noticeably. That cost
        is this thread's CPU time, not the time on the clock: a process that was paused or waited
        for a busy core meanwhile (SIGSTOP, the machine's other work) did no work, and counting
        that wait 50 times over (1 / STATS_BUDGET) would hold /metrics still for minutes after a
        pause of a few seconds.
        """
        now = time.monotonic()
        if now < self.next_at:
            return
        key = change_key(s)
        if key == self.key_sent:
            return  # the server's copy is up to date
        self.sent += 1
        cpu = time.thread_time()
        send(collect_stats(s))
        self.key_sent = key
        cost = time.thread_time() - cpu
        self.next_at = now + max(s.config.stats_interval, cost / STATS_BUDGET)
