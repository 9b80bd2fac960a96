"""/metrics (server/metrics.py) and the usage's cached_tokens.

First `ServerMetrics` alone: values observed at given times, rendered, parsed back with
prometheus_client's own parser, bucket by bucket. Then the detokenizer passing the scheduler's
prefix hit and queue time on to the API server. Then the real server on CPU (as in
tests/test_server.py, with its helpers): requests of every kind, and /metrics compared with what
the responses themselves reported.
"""

from __future__ import annotations

import collections
import json
import time

import httpx
import pytest
from live_server import PAGE_SIZE, parse_sse, running
from prometheus_client.parser import text_string_to_metric_families

from minisgl_edu.server.metrics import (
    ACCEPT_RATE_BUCKETS,
    E2E_BUCKETS,
    ITL_BUCKETS,
    QUEUE_BUCKETS,
    TTFT_BUCKETS,
    RequestTiming,
    ServerMetrics,
)


def parse(text: str) -> dict[str, float]:
    """Every sample of a Prometheus text page: `name` or `name{label=value,...}` -> value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def buckets(samples: dict[str, float], name: str, bounds) -> list[float]:
    """The cumulative bucket counts of histogram `name`, in the order of `bounds`, then +Inf."""
    return [samples[f"{name}_bucket{{le={float(b)!r}}}"] for b in bounds] + [samples[f"{name}_bucket{{le=+Inf}}"]]


def cumulative(values: list[float], bounds) -> list[int]:
    return [sum(v <= b for v in values) for b in bounds] + [len(values)]


# ---------------------------------------------------------------- ServerMetrics on its own


def new_metrics(stats=None, in_flight=0) -> ServerMetrics:
    stats = {} if stats is None else stats
    return ServerMetrics(scheduler_stats=lambda: stats, in_flight=lambda: in_flight)


def test_histograms_count_each_request_and_each_token():
    m = new_metrics()
    # Request a: first reply after 0.3 s with one token, then 1 token after 0.02 s, then a reply
    # carrying 3 tokens after 0.06 s (three observations of 0.02 s), then the end.
    a = RequestTiming(received=100.0)
    m.observe_reply(a, 1, now=100.3)
    m.observe_reply(a, 2, now=100.32)
    m.observe_reply(a, 5, now=100.38)
    m.observe_end(a, "length", prompt_tokens=7, output_tokens=5, cached_tokens=0, queue_seconds=0.004, now=100.4)
    # Request b: its only reply is also its end (one token), taken from the prefix cache in part.
    b = RequestTiming(received=200.0)
    m.observe_reply(b, 1, now=202.0)
    m.observe_end(b, "stop", prompt_tokens=40, output_tokens=1, cached_tokens=32, queue_seconds=0.2, now=202.0)
    # Request c: the client left before any token; its abort brings no token (k = 0, no ITL).
    c = RequestTiming(received=300.0)
    m.observe_end(c, "abort", prompt_tokens=9, output_tokens=0, cached_tokens=0, queue_seconds=None, now=301.0)
    m.observe_end(c, "abort", prompt_tokens=9, output_tokens=0, cached_tokens=0, queue_seconds=None, now=302.0)

    s = parse(m.render().decode())
    p = "minisgl_"
    ttft = [100.3 - 100.0, 2.0]
    itl = [100.32 - 100.3] + [(100.38 - 100.32) / 3] * 3
    e2e = [100.4 - 100.0, 2.0, 1.0]  # c once: the second observe_end changed nothing
    queue = [0.004, 0.2]  # c was never scheduled
    assert buckets(s, p + "time_to_first_token_seconds", TTFT_BUCKETS) == cumulative(ttft, TTFT_BUCKETS)
    assert buckets(s, p + "inter_token_latency_seconds", ITL_BUCKETS) == cumulative(itl, ITL_BUCKETS)
    assert buckets(s, p + "e2e_request_latency_seconds", E2E_BUCKETS) == cumulative(e2e, E2E_BUCKETS)
    assert buckets(s, p + "request_queue_time_seconds", QUEUE_BUCKETS) == cumulative(queue, QUEUE_BUCKETS)
    assert s[p + "inter_token_latency_seconds_count"] == 4
    assert s[p + "inter_token_latency_seconds_sum"] == pytest.approx(0.08)
    assert s[p + "e2e_request_latency_seconds_sum"] == pytest.approx(3.4)
    # The counted values land where the buckets say: 0.02 s is in (0.01, 0.025], 0.3 s in (0.25, 0.5].
    assert s[p + "inter_token_latency_seconds_bucket{le=0.01}"] == 0
    assert s[p + "inter_token_latency_seconds_bucket{le=0.025}"] == 4
    assert s[p + "time_to_first_token_seconds_bucket{le=0.25}"] == 0
    assert s[p + "time_to_first_token_seconds_bucket{le=0.5}"] == 1
    assert s[p + "prompt_tokens_total"] == 7 + 40 + 9
    assert s[p + "generation_tokens_total"] == 5 + 1 + 0
    assert s[p + "cached_tokens_total"] == 32
    assert s[p + "request_success_total{finished_reason=stop}"] == 1
    assert s[p + "request_success_total{finished_reason=length}"] == 1
    assert s[p + "request_success_total{finished_reason=abort}"] == 1


def test_scheduler_stats_are_read_when_scraped():
    stats = {"kv_pages_total": 64, "kv_pages_free": 60, "generated_tokens_total": 5, "flag": True, "name": "x"}
    m = new_metrics(stats, in_flight=2)
    first = m.render().decode()
    stats["kv_pages_free"] = 12  # the next SchedulerStatsMsg
    s = parse(m.render().decode())
    assert s["minisgl_kv_pages_total"] == 64 and s["minisgl_kv_pages_free"] == 12
    assert s["minisgl_generated_tokens_total"] == 5
    assert s["minisgl_http_requests_in_flight"] == 2
    assert "minisgl_kv_pages_free 60.0" in first.splitlines()
    # The names and types that tests/test_server.py, the reliability tests and notebook 02 read.
    assert "# TYPE minisgl_generated_tokens_total counter" in first
    assert "# TYPE minisgl_kv_pages_free gauge" in first
    assert "# TYPE minisgl_http_requests_in_flight gauge" in first
    assert not any("flag" in k or "name" in k for k in s)  # only numbers become metrics
    # Every finished_reason is there from the start, at 0.
    for reason in ("stop", "length", "abort"):
        assert s[f"minisgl_request_success_total{{finished_reason={reason}}}"] == 0
    assert m.content_type.startswith("text/plain; version=")


def test_speculative_metrics_are_histograms_of_the_verify_outcomes():
    # outcomes[d][a]: verifies of d drafts that accepted a. Here, with k = 2: one verify of 1
    # draft accepting 1, two of 2 drafts accepting 0, three of 2 drafts accepting 2.
    outcomes = [[0, 0, 0], [0, 1, 0], [2, 0, 3]]
    stats = {"spec_draft_tokens_total": 11, "spec_accepted_tokens_total": 7, "spec_verify_outcomes": outcomes}
    s = parse(new_metrics(stats).render().decode())
    assert s["minisgl_spec_draft_tokens_total"] == 11 and s["minisgl_spec_accepted_tokens_total"] == 7
    accepted = [1, 0, 0, 2, 2, 2]  # drafts accepted, one value per verify
    name = "minisgl_spec_accepted_drafts_per_verify"
    assert buckets(s, name, range(3)) == cumulative(accepted, range(3))
    assert s[name + "_count"] == 6 and s[name + "_sum"] == 7
    rates = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    name = "minisgl_spec_acceptance_rate"
    assert buckets(s, name, ACCEPT_RATE_BUCKETS) == cumulative(rates, ACCEPT_RATE_BUCKETS)
    assert s[name + "_count"] == 6 and s[name + "_sum"] == 4.0


def test_no_speculative_metrics_when_it_is_off():
    stats = {"spec_draft_tokens_total": 0, "spec_accepted_tokens_total": 0, "spec_verify_outcomes": []}
    assert not any("spec" in k for k in parse(new_metrics(stats).render().decode()))


def test_each_server_counts_in_its_own_registry():
    # With prometheus_client's global registry the second one would fail (duplicate names).
    a, b = new_metrics(), new_metrics()
    t = RequestTiming(received=0.0)
    a.observe_end(t, "stop", prompt_tokens=3, output_tokens=1, cached_tokens=0, queue_seconds=None, now=1.0)
    assert parse(a.render().decode())["minisgl_prompt_tokens_total"] == 3
    assert parse(b.render().decode())["minisgl_prompt_tokens_total"] == 0


# ---------------------------------------------------------------- detokenizer -> UserReply


@pytest.mark.slow
def test_detokenizer_passes_the_prefix_hit_and_the_queue_time_on(default_model_dir):
    from minisgl_edu.message import DetokenizeMsg
    from minisgl_edu.models import load_tokenizer
    from minisgl_edu.tokenizer.server import DetokenizeManager

    tok = load_tokenizer(default_model_dir)
    ids = tok.encode("🚀 go", add_special_tokens=False)  # the rocket is several byte tokens
    m = DetokenizeManager(tok)
    msgs = [DetokenizeMsg(uid=3, next_token=t, finished=False, cached_tokens=32) for t in ids]
    msgs[0].queue_seconds = 0.25  # the scheduler sets it on the first token only
    replies = [m.detokenize(msg) for msg in msgs]
    assert replies[0] is None  # a third of a character: nothing to send yet
    sent = [r for r in replies if r is not None]
    assert sent[0].queue_seconds == 0.25  # ... so the next reply that goes out carries it
    assert all(r.queue_seconds is None for r in sent[1:])  # once
    assert all(r.cached_tokens == 32 for r in sent)
    # The scheduler's abort message carries no prefix hit; the reply still reports it.
    end = m.detokenize(DetokenizeMsg(uid=3, next_token=-1, finished=True, finish_reason="abort"))
    assert end.cached_tokens == 32 and end.queue_seconds is None


# ---------------------------------------------------------------- the real server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(tmp_path_factory.mktemp("metrics-server")) as srv:
        yield srv


def scrape(srv) -> dict[str, float]:
    r = httpx.get(srv.url + "/metrics", timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=")
    return parse(r.text)


def wait_for(srv, condition, what: str, bound_s: float = 60.0) -> dict[str, float]:
    """Poll /metrics until `condition(m)` holds; the bound only stops a hang, it is no estimate."""
    deadline = time.monotonic() + bound_s
    while not condition(m := scrape(srv)):
        if time.monotonic() > deadline:
            raise AssertionError(f"/metrics did not show {what} within {bound_s} s: {m}")
        time.sleep(0.1)
    return m


def delta(after: dict[str, float], before: dict[str, float], name: str) -> float:
    return after[name] - before[name]


E2E_COUNT = "minisgl_e2e_request_latency_seconds_count"


def post(srv, path: str, body: dict) -> tuple[dict, str]:
    """One request, streamed or not: (its usage, its finish_reason)."""
    if not body.get("stream"):
        r = httpx.post(srv.url + path, json=body, timeout=120)
        assert r.status_code == 200, r.text
        out = r.json()
        return out["usage"], out["choices"][0]["finish_reason"]
    with httpx.stream("POST", srv.url + path, json=body, timeout=120) as r:
        assert r.status_code == 200
        payloads = parse_sse(r.read().decode())
    chunks = [json.loads(p) for p in payloads[:-1]]
    reason = next(c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"])
    return chunks[-1]["usage"], reason


CHAT = {"messages": [{"role": "user", "content": "Name three colors."}], "temperature": 0}
COUNTING = {"prompt": "1, 2, 3, 4, 5, 6,", "temperature": 0, "ignore_eos": True}
WITH_USAGE = {"stream": True, "stream_options": {"include_usage": True}}


@pytest.mark.slow
@pytest.mark.timeout(300, func_only=True)
def test_metrics_agree_with_what_the_requests_got(server):
    before = wait_for(server, lambda m: m["minisgl_http_requests_in_flight"] == 0, "an idle server")
    results = [
        post(server, "/v1/chat/completions", {**CHAT, "max_tokens": 6, "ignore_eos": True}),
        post(server, "/v1/chat/completions", {**CHAT, "max_tokens": 7, "ignore_eos": True, **WITH_USAGE}),
        post(server, "/v1/completions", {**COUNTING, "max_tokens": 10}),
    ]
    # A stop string from the greedy text just seen, so that one request ends with "stop".
    plain = httpx.post(server.url + "/v1/completions", json={**COUNTING, "max_tokens": 10}, timeout=120).json()
    results.append((plain["usage"], plain["choices"][0]["finish_reason"]))
    stop = plain["choices"][0]["text"].split(",")[2].strip()
    assert stop
    results.append(post(server, "/v1/completions", {**COUNTING, "max_tokens": 10, "stop": [stop]}))
    results.append(post(server, "/v1/completions", {**COUNTING, "max_tokens": 10, "stop": [stop], **WITH_USAGE}))
    n = len(results)
    # A stream's end is counted when its generator closes, just after the client got [DONE].
    after = wait_for(server, lambda m: delta(m, before, E2E_COUNT) >= n, f"{n} ended requests")

    usages = [u for u, _ in results]
    reasons = collections.Counter(r for _, r in results)
    assert reasons["stop"] >= 2 and reasons["length"] >= 3
    assert delta(after, before, E2E_COUNT) == n
    assert delta(after, before, "minisgl_time_to_first_token_seconds_count") == n
    assert delta(after, before, "minisgl_request_queue_time_seconds_count") == n
    # One observation per output token after the first reply. A first reply carries one token when
    # the API server keeps up, but on a busy machine replies that wait in a request's queue are
    # joined into one (generate._join_waiting), and the first reply's tokens are covered by the time
    # to first token instead. So the count lies between 1 and one per token after each request's
    # first; the exact arithmetic, token by token, is test_histograms_count_each_request_and_each_token's.
    itl = sum(u["completion_tokens"] - 1 for u in usages)
    assert 0 < delta(after, before, "minisgl_inter_token_latency_seconds_count") <= itl
    assert delta(after, before, "minisgl_prompt_tokens_total") == sum(u["prompt_tokens"] for u in usages)
    assert delta(after, before, "minisgl_generation_tokens_total") == sum(u["completion_tokens"] for u in usages)
    cached = sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages)
    assert delta(after, before, "minisgl_cached_tokens_total") == cached
    for reason in ("stop", "length", "abort"):
        name = f"minisgl_request_success_total{{finished_reason={reason}}}"
        assert delta(after, before, name) == reasons[reason], reason

    # A stream cut by its client after three content chunks: counted once, as abort.
    before = after
    long_chat = {**CHAT, "max_tokens": 400, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", server.url + "/v1/chat/completions", json=long_chat, timeout=120) as r:
        seen = 0
        for line in r.iter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["choices"][0]["delta"].get("content"):
                seen += 1
                if seen == 3:
                    break
    after = wait_for(server, lambda m: delta(m, before, E2E_COUNT) >= 1, "the cut stream's end")
    assert delta(after, before, "minisgl_request_success_total{finished_reason=abort}") == 1
    assert delta(after, before, "minisgl_request_success_total{finished_reason=stop}") == 0
    assert delta(after, before, "minisgl_request_success_total{finished_reason=length}") == 0
    assert delta(after, before, E2E_COUNT) == 1
    assert delta(after, before, "minisgl_time_to_first_token_seconds_count") == 1
    made = delta(after, before, "minisgl_generation_tokens_total")  # the tokens it got before the cut
    assert seen <= made < 400
    assert 0 < delta(after, before, "minisgl_inter_token_latency_seconds_count") <= made - 1  # as above
    assert delta(after, before, "minisgl_prompt_tokens_total") == usages[0]["prompt_tokens"]  # the same messages
    wait_for(server, lambda m: m["minisgl_http_requests_in_flight"] == 0, "no request in flight")


@pytest.mark.slow
@pytest.mark.timeout(180, func_only=True)
def test_the_same_long_prompt_twice_reuses_its_cached_pages(server):
    prompt = "The lighthouse keeper wrote in her log: " + ", ".join(f"wave {i}" for i in range(40)) + ". Then"
    body = {"prompt": prompt, "max_tokens": 3, "temperature": 0}
    before = wait_for(server, lambda m: m["minisgl_http_requests_in_flight"] == 0, "an idle server")
    first, _ = post(server, "/v1/completions", body)
    second, _ = post(server, "/v1/completions", {**body, **WITH_USAGE})  # the stream's usage chunk too
    after = wait_for(server, lambda m: delta(m, before, E2E_COUNT) >= 2, "two ended requests")
    n = first["prompt_tokens"]
    assert second["prompt_tokens"] == n > 3 * PAGE_SIZE
    assert first["prompt_tokens_details"] == {"cached_tokens": 0}  # a prompt this server never saw
    hit = second["prompt_tokens_details"]["cached_tokens"]
    assert 0 < hit < n
    # The radix cache holds whole pages, and the last prompt token is always computed again (its
    # logits give the first output token): the hit is every full page before it.
    assert hit == (n - 1) // PAGE_SIZE * PAGE_SIZE
    assert delta(after, before, "minisgl_cached_tokens_total") == hit
