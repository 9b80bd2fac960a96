"""Exercise 2 — abort: `abort_request(scheduler, uid) -> bool`.

The scheduler calls it for an `AbortBackendMsg` (`Scheduler.abort_fn`). Each case aborts a
request of the real engine at a different stage and checks that it is gone everywhere, that
every page and table row came back, and that the other requests were not disturbed.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import collect, encode, new_scheduler
from minisgl_edu.scheduler.abort import abort_request as reference

LONG = [{"role": "user", "content": "Tell me a long story about a cat, a dog and a very old lighthouse by the sea."}]
SHORT = [{"role": "user", "content": "Say hello."}]
GREEDY = SamplingParams(max_tokens=12, ignore_eos=True)


def _abort_at(fn, stage: str):
    s = new_scheduler(max_prefill_tokens=16)
    s.abort_fn = fn
    free0, rows0 = s.cache.num_free, s.cache.page_table.num_free_rows
    s.add_request(0, encode(s, LONG), GREEDY)
    if stage == "mid_chunk":
        s.step()
        assert 0 < s.reqs[0].cached_len < len(s.reqs[0].input_ids), "setup: expected a chunked prefill"
    elif stage == "decoding":
        while not s.reqs[0].output_ids:
            s.step()
        s.step()
    assert s.abort(0) is True, "abort of a live request must return True"
    assert 0 not in s.reqs, "the request is still in scheduler.reqs"
    assert all(r.uid != 0 for r in s.waiting), "the request is still in the waiting queue"
    assert all(r.uid != 0 for r in s.running), "the request is still in the running set"
    assert s.cache.num_free == free0, f"{free0 - s.cache.num_free} pages were not given back"
    assert s.cache.page_table.num_free_rows == rows0, "the page-table row was not given back"
    last = collect(s)
    assert last.reasons.get(0) == "abort", "the detokenizer must get a finished message with finish_reason 'abort'"
    s.cache.check()
    assert s.step() is None and s.is_idle, "the scheduler should have nothing left to do"


def case_waiting(fn):
    _abort_at(fn, "waiting")


def case_mid_chunk(fn):
    _abort_at(fn, "mid_chunk")


def case_decoding(fn):
    _abort_at(fn, "decoding")


def case_unknown_uid(fn):
    s = new_scheduler()
    s.abort_fn = fn
    assert s.abort(12345) is False, "aborting an unknown (or finished) uid must return False and change nothing"
    assert collect(s).reasons == {}, "no message for a uid the scheduler does not know"


def case_others_unharmed(fn):
    def run(abort_fn):
        s = new_scheduler()
        s.abort_fn = abort_fn
        for uid in range(3):
            s.add_request(uid, encode(s, SHORT), GREEDY)
        s.step()
        s.step()
        s.abort(1)
        s.run_until_idle()
        return collect(s), s
    got, s = run(fn)  # yours first: an unfinished stub fails before the reference run
    ref, _ = run(reference)
    for uid in (0, 2):
        assert got.tokens[uid] == ref.tokens[uid], f"request {uid} was disturbed by aborting request 1"
    assert s.cache.num_available == s.cache.num_pages, "pages are missing after all requests ended"


CASES = [
    Case("abort while waiting", case_waiting, "a waiting request has no pages yet: remove it from scheduler.waiting"),
    Case("abort mid chunked prefill", case_mid_chunk, "it is still in scheduler.waiting but holds pages: scheduler.cache.release(req, cache_it=False)"),
    Case("abort while decoding", case_decoding, "remove it from scheduler.running and release its pages and row"),
    Case("unknown uid", case_unknown_uid, "scheduler.reqs.pop(uid, None) tells you whether it is there"),
    Case("other requests unharmed", case_others_unharmed, "only touch the aborted request"),
]
SYMBOL = "abort_request"
SOLUTION = reference
