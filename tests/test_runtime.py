"""The in-process runtime on a tiny random model: the server's path, one step at a time."""

from __future__ import annotations

import threading

import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.runtime import LocalServer
from minisgl_edu.scheduler import Scheduler, SchedulerConfig

GREEDY = SamplingParams(max_tokens=6, ignore_eos=True)


def prompt(n: int, seed: int = 0) -> list[int]:
    return [(seed * 7919 + i * 104729) % 49000 + 100 for i in range(n)]


@pytest.fixture
def srv(tiny_model_dir):
    s = LocalServer(tiny_model_dir, device="cpu", page_size=4, num_pages=64, max_prefill_tokens=64)
    yield s
    s.stop()


def test_submit_step_result_match_the_bare_scheduler(srv, tiny_model_dir):
    uids = [srv.submit(prompt(n, i), GREEDY) for i, n in enumerate([5, 11, 3])]
    assert srv.result(uids[0]).finish_reason is None
    first = srv.step()
    # One prefill batch of all three: the runtime adds no scheduling of its own.
    assert first.batch.phase == "prefill" and first.batch.uids == uids
    assert [it.num_tokens for it in first.batch.items] == [5, 11, 3]
    assert first.running == uids and first.waiting == []
    assert srv.result(uids[0]).finish_reason is None
    srv.run_until_idle()

    ref = Scheduler(SchedulerConfig(model=tiny_model_dir, device="cpu", page_size=4, num_pages=64))
    for uid, (i, n) in zip(uids, enumerate([5, 11, 3])):
        ref.add_request(uid, prompt(n, i), GREEDY)
    ref.run_until_idle()
    expected: dict[int, list[int]] = {}
    for m in ref.io.drain():
        expected.setdefault(m.uid, []).append(m.next_token)
    for uid in uids:
        res = srv.result(uid)
        assert res.token_ids == expected[uid]
        assert res.finish_reason == "length"
        assert res.text == srv.tokenizer.decode(res.token_ids, skip_special_tokens=True)
        assert res.prompt_token_ids == prompt([5, 11, 3][uid], uid)


def test_plan_shows_the_batch_the_next_step_runs(srv):
    a = srv.submit(prompt(9), GREEDY)
    snap = srv.plan()
    assert snap.next_batch.phase == "prefill" and snap.next_batch.uids == [a]
    assert snap.batch is None  # nothing ran yet
    b = srv.submit(prompt(4, 1), GREEDY)  # too late for the planned batch
    ran = srv.step().batch
    assert ran.batch_id == snap.next_batch.batch_id and ran.uids == [a]
    assert srv.step().batch.uids == [b]  # prefill first: b's prompt before a's next decode


def test_chat_prompt_goes_through_the_chat_template(srv):
    chat = [{"role": "user", "content": "hi"}]
    res = srv.generate(chat, SamplingParams(max_tokens=2, ignore_eos=True))
    text = srv.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n")
    assert srv.tokenizer.decode(res.prompt_token_ids) == text
    assert len(res.token_ids) == 2


def test_abort_frees_every_page_mid_decode(srv):
    free0 = srv.snapshot().free_pages
    keep = srv.submit(prompt(6, 1), SamplingParams(max_tokens=4, ignore_eos=True))
    gone = srv.submit(prompt(30, 2), SamplingParams(max_tokens=50, ignore_eos=True))
    srv.step()
    srv.step()
    snap = srv.snapshot()
    assert gone in snap.running and len(snap.pages.rows[gone]) >= 8  # 31 tokens on 4-token pages
    assert srv.abort(gone) is True
    res = srv.result(gone)
    assert res.finish_reason == "abort" and res.finished
    after = srv.snapshot()
    assert gone not in after.pages.rows and gone not in after.running
    assert srv.abort(gone) is False  # a second abort is a no-op
    srv.run_until_idle()
    assert srv.result(keep).finish_reason == "length"
    srv.scheduler.cache.check()
    assert srv.snapshot().free_pages == free0  # cached pages count as available


def test_abort_before_the_tokenizer_ran(srv):
    uid = srv.submit(prompt(5), GREEDY)
    assert srv.abort(uid)
    assert srv.result(uid).finish_reason == "abort" and srv.result(uid).token_ids == []
    assert srv.is_idle()


def test_trace_follows_the_server_path_in_order(srv):
    uid = srv.submit(prompt(5), SamplingParams(max_tokens=3, ignore_eos=True))
    srv.run_until_idle()
    names = [(e.component, e.event) for e in srv.trace(uid)]
    path = [
        ("api_server", "received"),
        ("api_server", "TokenizeMsg sent"),
        ("tokenizer", "TokenizeMsg received"),
        ("tokenizer", "UserMsg sent"),
        ("scheduler", "queued"),
        ("scheduler", "scheduled"),
        ("scheduler", "token"),
        ("scheduler", "DetokenizeMsg sent"),
        ("detokenizer", "UserReply sent"),
        ("scheduler", "finished"),
        ("api_server", "[DONE]"),
    ]
    positions = [names.index(p) for p in path]
    assert positions == sorted(positions)
    assert names[-1] == ("api_server", "[DONE]")
    assert sum(1 for n in names if n == ("scheduler", "token")) == 3
    times = [e.time for e in srv.trace(uid)]
    assert times == sorted(times)


def test_trace_of_an_abort(srv):
    uid = srv.submit(prompt(5), SamplingParams(max_tokens=20, ignore_eos=True))
    srv.step()
    srv.abort(uid)
    names = [(e.component, e.event) for e in srv.trace(uid)]
    tail = names[names.index(("api_server", "AbortMsg sent")) :]
    assert sorted(tail) == sorted(
        [
            ("api_server", "AbortMsg sent"),
            ("tokenizer", "AbortMsg received"),
            ("tokenizer", "AbortBackendMsg sent"),
            ("scheduler", "aborted"),
            ("scheduler", "DetokenizeMsg sent"),
            ("detokenizer", "UserReply sent"),
            ("api_server", "closed"),
        ]
    )
    # The message order; inside the scheduler "aborted" and its DetokenizeMsg may come either way.
    order = [
        ("api_server", "AbortMsg sent"),
        ("tokenizer", "AbortBackendMsg sent"),
        ("scheduler", "DetokenizeMsg sent"),
        ("detokenizer", "UserReply sent"),
        ("api_server", "closed"),
    ]
    assert [tail.index(x) for x in order] == sorted(tail.index(x) for x in order)


def test_rejected_prompt_gets_an_error_and_never_reaches_the_scheduler(srv):
    uid = srv.submit(prompt(300), GREEDY)  # 64 pages x 4 tokens = 256-token context
    srv.run_until_idle()
    res = srv.result(uid)
    assert res.finish_reason == "abort" and "context" in res.error
    assert ("scheduler", "queued") not in [(e.component, e.event) for e in srv.trace(uid)]


def test_stream_yields_the_text_in_pieces(srv):
    pieces = list(srv.stream(prompt(5), SamplingParams(max_tokens=5, ignore_eos=True)))
    res = srv.result(max(srv.results))
    assert "".join(pieces) == res.text and len(res.token_ids) == 5


def test_reset_starts_from_an_empty_cache(srv):
    srv.submit(prompt(12), SamplingParams(max_tokens=30, ignore_eos=True))
    srv.step()
    srv.reset()
    snap = srv.snapshot()
    assert snap.requests == {} and snap.free_pages == snap.pages.num_pages and srv.tracer.events() == []
    assert srv.submit(prompt(3), GREEDY) == 0
    srv.run_until_idle()
    assert srv.result(0).finish_reason == "length"


def test_background_loop_pause_step_resume(srv):
    seen = []
    srv.on_step.append(lambda snap: seen.append(snap.steps))
    srv.start(paused=True)
    uid = srv.submit(prompt(5), SamplingParams(max_tokens=8, ignore_eos=True))
    # Paused: the loop must not step on its own; the notebook single-steps instead.
    threading.Event().wait(0.2)
    assert seen == [] and srv.result(uid).token_ids == []
    srv.step()
    assert len(srv.result(uid).token_ids) == 1
    srv.resume()
    srv.run_until_idle(timeout=60)
    assert srv.result(uid).finish_reason == "length" and len(srv.result(uid).token_ids) == 8
    srv.pause()
    n = len(seen)
    srv.submit(prompt(4, 3), GREEDY)
    threading.Event().wait(0.2)
    assert len(seen) == n  # paused again: nothing ran
    srv.stop()
    assert not srv.background
