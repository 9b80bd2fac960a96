"""Exercise 2's scene of a prompt whose last chunk is in flight, played by `base.case_in_flight`.

On the overlap loop, launch() moves a prompt chunk's `req.cached_len` to the chunk's end at once
(the chunk must not be scheduled again), so while a request's last prompt chunk is in flight it
has `req.remaining_prompt == 0`; yet it stays in `scheduler.waiting` until that batch lands and
its first token comes back (`Scheduler.advance` moves it to `scheduler.running` then). An abort
that picks the queue by how much prompt is left looks for it in `scheduler.running`: remove()
raises ValueError half-way through the abort, or the request stays in `scheduler.waiting`.

The scene watches the running list's remove() and names that mistake when the abort looked for
this waiting request there; when the abort returned and left it waiting, it names it only if a
probe shows the same answer takes a request part-way through its prompt (some prompt left) out of
the waiting queue. Then it checks what `case_in_flight` checks for a decoding request.
"""

from __future__ import annotations

from minisgl_edu.grading.abort.batch_kept import batch_in_flight, check_batch_kept
from minisgl_edu.grading.abort.checks import (
    GREEDY,
    LONG,
    SHORT,
    abort,
    check_all_back,
    check_gone,
    check_marked,
    check_message,
    check_nothing_back_early,
    check_own_pages,
    check_release_asked,
    engine_step,
    start,
)
from minisgl_edu.grading.abort.probes import MissList, probe_uid
from minisgl_edu.grading.abort.release_seen import changed_after_asked
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import modelless, step_until, waiting
from minisgl_edu.grading.harness import encode

LAST_CHUNK = (
    "a request whose last prompt chunk is in flight (overlap loop) has req.remaining_prompt == 0 (launch moved "
    "req.cached_len to the prompt's end) but stays in scheduler.waiting until its first token lands: decide the "
    "queue by membership (if req in scheduler.waiting: ...), not by how much of the prompt is left"
)
WHEN = (
    "the request (uid 0) was aborted while the last chunk of its prompt was in flight on the overlap loop: launch() "
    "had moved req.cached_len to the prompt's end, so req.remaining_prompt == 0, but the request was still in "
    "scheduler.waiting (it moves to scheduler.running when its first token lands)"
)


def takes_a_chunked_prompt_out(fn) -> bool:
    """`fn`, aborting a request part-way through its chunked prefill (some prompt left, in
    scheduler.waiting), on a modelless scheduler of its own, takes it out of scheduler.waiting."""
    s = modelless(max_prefill_tokens=4)
    s.abort_fn = fn
    req = waiting(s, probe_uid(), 10)
    s.step()
    if not 0 < req.remaining_prompt < len(req.input_ids) or req not in s.waiting:
        return False
    try:
        s.abort(req.uid)
    except Exception:
        return False  # some other mistake: the failed check's own hint stands
    return all(r is not req for r in s.waiting)


def last_chunk_in_flight(fn) -> None:
    s = start(fn, cache="naive", max_prefill_tokens=16)
    s.add_request(0, encode(s, LONG), GREEDY)  # a chunked prompt
    s.add_request(1, encode(s, SHORT), GREEDY)  # another request, which goes on
    req = s.reqs[0]
    step_until(
        s,
        lambda: s.has_in_flight and req in s.in_flight_batch.reqs and req.remaining_prompt == 0,
        "the last chunk of the prompt in flight",
        step=s.overlap_step,
    )
    assert req in s.waiting and not req.output_ids, "setup: the request should still wait for its first token"
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    s.io.drain()
    deferred, batch = s.cache.num_deferred, batch_in_flight(s)
    s.running = MissList(s.running)
    try:
        abort(s, 0)
    except Exception as e:
        if any(r is req for r in s.running.not_found) and req in s.waiting:
            raise Mistake(f"{WHEN}; your abort called scheduler.running.remove(req) for it", LAST_CHUNK) from e
        raise
    if req in s.waiting and takes_a_chunked_prompt_out(fn):
        raise Mistake(
            f"{WHEN}; your abort left it there, while it takes a request with some prompt left out of "
            "scheduler.waiting",
            LAST_CHUNK,
        )
    check_gone(s, 0)
    check_marked(req)
    check_batch_kept(s, batch)
    check_release_asked(s, row, deferred)
    check_nothing_back_early(s, pages, deferred)
    mistake = changed_after_asked(s, req)
    if mistake is not None:
        raise mistake
    engine_step("the next overlap step", s.overlap_step)  # the batch lands; the deferred release happens
    check_own_pages(s, row, pages)
    engine_step("the overlap loop", lambda: s.run_until_idle(overlap=True))
    msgs = s.io.drain()
    check_message(msgs, 0)
    assert not [m for m in msgs if m.uid == 0 and m.next_token >= 0], (
        "the aborted request got a token from the prompt chunk that was in flight"
    )
    check_all_back(s)
