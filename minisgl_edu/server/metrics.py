"""The API server's Prometheus metrics: what GET /metrics serves.

Where this sits on the request path: at the HTTP edge, in the API server process, beside
`generate.py`. Two kinds of numbers end up on /metrics:

* Request metrics, measured here, where a client sees them: `generate()` starts a
  `RequestTiming` when a request arrives, calls `observe_reply` for every reply it hands on
  (the first one gives the time to first token, each later one the inter-token latency) and
  `observe_end` once when the request is over (end-to-end latency, queue time, token counts,
  finish reason). The names and buckets follow vLLM's (`vllm:time_to_first_token_seconds` ...)
  and SGLang's (`sglang:cached_tokens_total`), with the prefix `minisgl_`: the names the
  scheduler's gauges already have. (prometheus_client accepts a colon as vLLM and SGLang use it,
  but Prometheus reserves colons for recording rules written by users.)
* The scheduler's own statistics (`SchedulerStats`: pages, running and waiting requests, and with
  speculative decoding the drafts accepted, as counters and two histograms), which
  it pushes to the API server every few steps (`SchedulerStatsMsg`, kept in
  `FrontendState.stats`), and the number of requests the API server waits on. Those values live
  elsewhere, so a collector reads them when /metrics is scraped instead of copying them here.

Each server has its own `CollectorRegistry`, not prometheus_client's global one: two servers (or
tests) in one process then count separately, and none sees the other's metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

PREFIX = "minisgl_"

# Buckets in seconds, modelled on vLLM's, with a few more at the short end, where a 135M model
# on a GPU lives (a decode step of a few milliseconds, a queue wait of well under one).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
ITL_BUCKETS = (0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
               2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)  # fmt: skip
E2E_BUCKETS = (0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
               480.0, 960.0, 1920.0, 7680.0)  # fmt: skip
QUEUE_BUCKETS = (0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
                 300.0, 600.0)  # fmt: skip

FINISHED_REASONS = ("stop", "length", "abort")

# The scheduler's statistics as they appear on /metrics (prefixed), with their type and help.
# A field the scheduler adds later still shows up, as a gauge with a generic help text.
SCHEDULER_STATS = {
    "kv_pages_total": ("gauge", "Pages in the paged KV cache."),
    "kv_pages_free": ("gauge", "KV pages available to new requests (free, or cached and evictable)."),
    "kv_pages_cached": ("gauge", "KV pages held by the prefix cache."),
    "running_requests": ("gauge", "Requests in the decode batch."),
    "waiting_requests": ("gauge", "Requests waiting for (or part-way through) prefill."),
    "generated_tokens_total": ("counter", "Tokens the scheduler sampled since start-up, aborted requests included."),
    "spec_draft_tokens_total": ("counter", "Speculative decoding: draft tokens proposed for verification."),
    "spec_accepted_tokens_total": ("counter", "Speculative decoding: draft tokens the model accepted."),
}
# Speculative decoding: the share of a verify's drafts that were accepted.
ACCEPT_RATE_BUCKETS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass
class RequestTiming:
    """When one request reached each point the client sees (all `time.perf_counter()`)."""

    received: float = field(default_factory=time.perf_counter)
    first_reply: Optional[float] = None  # the first reply with text (or the end)
    last_reply: Optional[float] = None
    tokens_seen: int = 0  # output tokens in the replies observed so far
    ended: bool = False  # observe_end has counted it


class _SchedulerStatsCollector:
    """Reads the scheduler's latest statistics and the in-flight count at scrape time."""

    def __init__(self, scheduler_stats: Callable[[], dict], in_flight: Callable[[], int]) -> None:
        self.scheduler_stats = scheduler_stats
        self.in_flight = in_flight

    def collect(self) -> Iterator[Metric]:
        stats = self.scheduler_stats()
        speculating = bool(stats.get("spec_verify_outcomes"))
        for key, value in stats.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue  # only numbers are metrics
            if key.startswith("spec_") and not speculating:
                continue  # speculative decoding is off: no such metrics
            kind, help_text = SCHEDULER_STATS.get(key, ("gauge", f"Scheduler statistic {key}."))
            family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            yield family(PREFIX + key, help_text, value=value)
        yield GaugeMetricFamily(
            PREFIX + "http_requests_in_flight",
            "Generation requests the API server is waiting on.",
            value=self.in_flight(),
        )
        if speculating:
            yield from speculative_histograms(stats["spec_verify_outcomes"])


def speculative_histograms(outcomes: list[list[int]]) -> Iterator[Metric]:
    """Two histograms over every request's verifies, from `outcomes[d][a]` (verifies of d drafts
    that accepted a): drafts accepted per verify (the step gave a + 1 tokens: the accepted drafts
    and the model's own), and the share accepted, a / d. The scheduler counts outcomes rather than
    observations, so both are exact and the message stays small."""
    k = len(outcomes) - 1
    verifies = [(d, a, n) for d, row in enumerate(outcomes) for a, n in enumerate(row) if n and d]
    total = sum(n for _, _, n in verifies)
    accepted = sum(a * n for _, a, n in verifies)
    yield HistogramMetricFamily(
        PREFIX + "spec_accepted_drafts_per_verify",
        "Speculative decoding: drafts one request's verify accepted (it gave that many tokens plus one).",
        buckets=[(str(float(b)), sum(n for _, a, n in verifies if a <= b)) for b in range(k + 1)] + [("+Inf", total)],
        sum_value=accepted,
    )
    yield HistogramMetricFamily(
        PREFIX + "spec_acceptance_rate",
        "Speculative decoding: the share of one request's drafts that its verify accepted.",
        buckets=[(str(b), sum(n for d, a, n in verifies if a / d <= b)) for b in ACCEPT_RATE_BUCKETS]
        + [("+Inf", total)],
        sum_value=sum(a / d * n for d, a, n in verifies),
    )


class ServerMetrics:
    """The metrics of one API server, in a registry of its own; `render()` is the /metrics body."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, scheduler_stats: Callable[[], dict], in_flight: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.time_to_first_token = Histogram(
            PREFIX + "time_to_first_token_seconds",
            "Time from receiving a request to its first reply with text, in seconds.",
            buckets=TTFT_BUCKETS,
            registry=r,
        )
        self.inter_token_latency = Histogram(
            PREFIX + "inter_token_latency_seconds",
            "Time between successive output tokens after the first reply, in seconds (one observation per token).",
            buckets=ITL_BUCKETS,
            registry=r,
        )
        self.e2e_request_latency = Histogram(
            PREFIX + "e2e_request_latency_seconds",
            "Time from receiving a request to its end (last reply, abort or timeout), in seconds.",
            buckets=E2E_BUCKETS,
            registry=r,
        )
        self.request_queue_time = Histogram(
            PREFIX + "request_queue_time_seconds",
            "Time a request waited in the scheduler before it was first scheduled, in seconds.",
            buckets=QUEUE_BUCKETS,
            registry=r,
        )
        self.prompt_tokens = Counter(PREFIX + "prompt_tokens_total", "Prompt tokens of ended requests.", registry=r)
        self.generation_tokens = Counter(
            PREFIX + "generation_tokens_total",
            "Output tokens of ended requests, as their usage reports them (aborted requests: those sent so far).",
            registry=r,
        )
        self.cached_tokens = Counter(
            PREFIX + "cached_tokens_total", "Prompt tokens of ended requests reused from the prefix cache.", registry=r
        )
        self.request_success = Counter(
            PREFIX + "request_success_total",
            "Ended requests by finished_reason; abort covers clients that left, timeouts and failed workers.",
            ["finished_reason"],
            registry=r,
        )
        for reason in FINISHED_REASONS:
            self.request_success.labels(reason)  # every reason on /metrics from the start, at 0
        r.register(_SchedulerStatsCollector(scheduler_stats, in_flight))

    def observe_reply(self, timing: RequestTiming, num_output_tokens: int, now: Optional[float] = None) -> None:
        """A reply of the request is on its way to the client; it brings its output to `num_output_tokens`."""
        now = time.perf_counter() if now is None else now
        if timing.first_reply is None:
            timing.first_reply = now
            self.time_to_first_token.observe(now - timing.received)
        else:
            # A reply can carry several tokens (the detokenizer holds tokens back until they make
            # text). As vLLM and SGLang do, each of the k new tokens counts as one observation
            # of gap / k, so that a histogram of tokens, not of replies, comes out. Tokens that
            # came with the first reply are covered by the time to first token instead.
            new_tokens = num_output_tokens - timing.tokens_seen
            if new_tokens > 0:
                gap = (now - timing.last_reply) / new_tokens
                for _ in range(new_tokens):
                    self.inter_token_latency.observe(gap)
        timing.last_reply = now
        timing.tokens_seen = max(timing.tokens_seen, num_output_tokens)

    def observe_end(
        self,
        timing: RequestTiming,
        finished_reason: str,
        prompt_tokens: int,
        output_tokens: int,
        cached_tokens: int,
        queue_seconds: Optional[float],
        now: Optional[float] = None,
    ) -> None:
        """The request is over (finished, aborted or timed out). Counted once; later calls do nothing."""
        if timing.ended:
            return
        timing.ended = True
        now = time.perf_counter() if now is None else now
        self.e2e_request_latency.observe(now - timing.received)
        if queue_seconds is not None:  # None: it never got scheduled (aborted while waiting)
            self.request_queue_time.observe(queue_seconds)
        self.prompt_tokens.inc(prompt_tokens)
        self.generation_tokens.inc(output_tokens)
        self.cached_tokens.inc(cached_tokens)
        self.request_success.labels(finished_reason).inc()

    def render(self) -> bytes:
        """The Prometheus text exposition of everything in the registry."""
        return generate_latest(self.registry)
