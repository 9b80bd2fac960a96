"""The trace: serialisable events, merging traces of several processes, the text summary."""

from __future__ import annotations

import json

from minisgl_edu.trace import TraceEvent, Tracer, merge, summarize


def test_events_round_trip_through_json_and_merge_in_time_order():
    api, sched = Tracer(), Tracer()
    api.record(7, "api_server", "received")
    sched.record(7, "scheduler", "queued", prompt_tokens=5)
    api.record(7, "api_server", "[DONE]", finish_reason="stop")
    sched.record(8, "scheduler", "queued", prompt_tokens=2)
    # As if each process sent its events over a socket as JSON.
    merged = merge(json.loads(api.to_json()), json.loads(sched.to_json(7)))
    assert [e.event for e in merged] == ["received", "queued", "[DONE]"]
    assert merged[1].data == {"prompt_tokens": 5} and all(isinstance(e, TraceEvent) for e in merged)
    t = Tracer()
    t.extend(e.to_dict() for e in merged)
    assert t.events(7) == merged


def test_disabled_tracer_records_nothing():
    t = Tracer(enabled=False)
    t.record(1, "scheduler", "queued")
    assert t.events() == []


def test_summarize_keeps_the_first_tokens_and_the_end():
    t = Tracer()
    t.record(1, "scheduler", "scheduled", phase="prefill", batch=1)
    for i in range(10):
        if i:
            t.record(1, "scheduler", "scheduled", phase="decode", batch=i + 1)
        t.record(1, "scheduler", "token", token=100 + i, index=i)
        t.record(1, "scheduler", "DetokenizeMsg sent", token=100 + i, finished=i == 9)
    t.record(1, "api_server", "[DONE]")
    lines = summarize(t.events(1), max_tokens=2)
    shown_tokens = [ln.split("token=")[1].split()[0] for ln in lines if ln.split()[1] == "token"]
    assert shown_tokens == ["100", "101"]
    assert any("8 more tokens" in ln for ln in lines)
    assert lines[-1].startswith("api_server") and "finished=True" in lines[-2]
