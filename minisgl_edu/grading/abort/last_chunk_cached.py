"""Exercise 2, stretch: an abort while the request's last prompt chunk is in flight, what it caches.

On the overlap loop, launch() moves a prompt chunk's `req.cached_len` to the chunk's end at once, so
while the last chunk of a prompt is in flight the request has sampled no token yet and
`req.cached_len == len(req.all_ids)`: every id of all_ids is a prompt token whose K/V the batch is
writing, and release(req, cache_it=True) waits for it to land. An answer that "never counts the
newest sampled token" by clamping req.cached_len to len(req.all_ids) - 1 changes nothing while the
request decodes (cached_len already leaves that token out), but here it drops a prompt token: a
prompt of whole pages caches one page too few.

Here: the hand case that plays it on the real engine (a prompt cut to whole pages, chunked), the
probe that tells that clamp by behaviour on a modelless scheduler (one page fewer than the reference
exactly when the last chunk was in flight, and every computed page while decoding), and the wrapper
the generated phase puts around its cache hints.
"""

from __future__ import annotations

from typing import Any, Callable

from minisgl_edu.grading.abort.cache_checks import check_cached
from minisgl_edu.grading.abort.checks import (
    GREEDY,
    LONG,
    MARK,
    abort,
    check_all_back,
    check_gone,
    check_marked,
    check_message,
    engine_step,
    start,
)
from minisgl_edu.grading.abort.probes import drops_a_computed_token, probe_uid
from minisgl_edu.grading.abort.release_seen import changed_after_asked, stand_in, unpinned
from minisgl_edu.grading.core import Mistake, hinted
from minisgl_edu.grading.explore import Difference
from minisgl_edu.grading.fixtures import held, modelless, step_until, waiting
from minisgl_edu.grading.harness import encode

NEWEST_IS_PROMPT = (
    "the request had sampled no token yet: its last prompt chunk was in flight, and launch() already counts it "
    "in req.cached_len (== len(req.all_ids); release() waits for it to land), so the last id of all_ids is a "
    "prompt token, not a sampled one. req.cached_len never counts the newest sampled token: leave it as it is, "
    "do not clamp it to len(req.all_ids) - 1 or lower it in any other way"
)


def _last_chunk_in_flight(s: Any, req: Any) -> None:
    """Overlap steps until the last chunk of `req`'s prompt is in flight (no token sampled yet)."""
    step_until(
        s,
        lambda: s.has_in_flight and req in s.in_flight_batch.reqs and req.remaining_prompt == 0,
        "the last chunk of the prompt in flight",
        step=s.overlap_step,
        max_steps=40,
    )


def clamps_the_last_chunk(fn: Any) -> bool:
    """`fn`, aborting a request (an 8-token prompt, chunks of 4, pages of 4) while its last prompt chunk is in
    flight, on a modelless scheduler of its own, leaves 1 of its 2 computed pages in the prefix cache once
    the batch lands, while it caches every computed page of a decoding request: it cuts req.cached_len only
    when the last of all_ids is a prompt token."""
    try:
        s = modelless(cache="radix", max_prefill_tokens=4)
        s.abort_fn = fn
        req = waiting(s, probe_uid(), 8, max_tokens=4)
        _last_chunk_in_flight(s, req)
        ids = list(req.all_ids)
        s.abort(req.uid)
        s.overlap_step()  # the batch lands; the release waiting for it happens
        cached = len(s.cache.prefix_cache.match_prefix(ids)[1])
    except Exception:
        return False  # some other mistake: the failed check's own hint stands
    return cached == 1 and not drops_a_computed_token(fn)


def case_last_chunk_in_flight(fn):
    s = start(fn, max_prefill_tokens=16)
    ps = s.cache.page_size
    ids = encode(s, LONG)
    ids = ids[: len(ids) // ps * ps]  # a prompt of whole pages: its last page is full once the chunk lands
    s.add_request(0, ids, GREEDY)
    req = s.reqs[0]
    _last_chunk_in_flight(s, req)
    assert not req.output_ids and req.cached_len == len(req.all_ids) > 16, "setup: the last chunk in flight"
    s.io.drain()
    b = held(s, 0, match=True)
    abort(s, 0)
    with hinted(MARK):
        check_marked(req)
    check_gone(s, 0)
    mistake = unpinned(s) or changed_after_asked(s, req) or stand_in(s)
    if mistake is not None:
        raise mistake
    engine_step("the next overlap step", s.overlap_step)  # the batch lands; the deferred release happens
    got = len(s.cache.prefix_cache.match_prefix(ids)[1])
    if got < b.full(ps) and clamps_the_last_chunk(fn):
        raise Mistake(
            f"the request (uid 0, a prompt of {len(ids)} tokens, {b.full(ps)} whole pages) was aborted while the "
            f"last chunk of its prompt was in flight: req.cached_len was {b.cached_len} == len(req.all_ids), and "
            f"once the batch landed the prefix cache held {got} of its {b.full(ps)} computed pages",
            NEWEST_IS_PROMPT,
        )
    check_message(s.io.drain(), 0)
    check_cached(s, b)
    engine_step("the overlap loop", lambda: s.run_until_idle(overlap=True))
    check_all_back(s)


def or_last_chunk(hint: Any, answer: list) -> Callable[[Any, Difference], str]:
    """A generated-phase cache hint, with NEWEST_IS_PROMPT first when the probe shows the answer cuts
    req.cached_len while the last prompt chunk is in flight."""

    def named(scene: Any, diff: Difference) -> str:
        if answer and clamps_the_last_chunk(answer[0]):
            return NEWEST_IS_PROMPT
        return hint(scene, diff) if callable(hint) else hint

    return named
