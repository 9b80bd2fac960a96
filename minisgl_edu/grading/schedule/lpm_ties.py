"""Exercise 5's stretch: requests with the same cached prefix keep their arrival order.

Longest prefix match sorts the requests not yet admitted by one number, the pages
`scheduler.cache.match(req)` returns, with a stable sort: requests with as many cached pages keep
the order they arrived in. An answer that adds a second key (the prompt's length, the uid,
max_tokens, ...) or reverses the sort gives the reference's order only while that key happens to
agree with arrival.

`case_ties` plays two requests with equal cached prefixes in both arrival orders, then asks
`tie_breaker`: pairs of tied requests that differ in one thing each (the prompt's length, the uid,
max_tokens), each played with that thing swapped between the two. When the later arrival goes first,
the swap tells which key the answer broke the tie by, and the hint names it.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import (
    add_waiting,
    decide_in_order,
    expect_order,
    hide_engine_answer,
    lpm_sched,
)
from minisgl_edu.grading.schedule.lpm_head import check_head_sorted
from minisgl_edu.grading.schedule.lpm_listed import check_listed_in_queue_order

TIES_HINT = (
    "requests with the same number of cached pages keep their arrival order{}: sort by len(pages) of "
    "scheduler.cache.match(req) alone, with a stable sort (list.sort or sorted), and add no second key"
)


def _two_ties(arrivals: list[int]):
    s = lpm_sched()
    shared = cached(s, token_ids(8, 60))
    add_waiting(s, 5, token_ids(6, 5), pages=0)
    for uid in arrivals:
        add_waiting(s, uid, shared + token_ids(3, uid), pages=2)
    return s


def case_ties(fn):
    for arrivals in ([3, 4], [4, 3]):
        s = _two_ties(arrivals)
        order = [r.uid for r in s.waiting]
        batch = decide_in_order(fn, s)
        check_head_sorted(fn, batch, arrivals + [5], order)
        check_listed_in_queue_order(fn, batch, arrivals + [5], order)
        expect_order(
            batch,
            arrivals + [5],
            s,
            f"requests {arrivals[0]} then {arrivals[1]} arrive after request 5, both with 2 cached prefix "
            "pages: equal matches keep their arrival order (a stable sort, not by uid, not reversed)",
            order,
        )
    mistake = tie_breaker(fn)
    if mistake is not None:
        raise mistake


def _first(fn, first: tuple[int, int, int], second: tuple[int, int, int]) -> Optional[int]:
    """The uid the answer puts first of two waiting requests with 2 cached prefix pages each, given as
    (uid, prompt tokens after the cached 8, max_tokens) in arrival order; None if it crashes or
    schedules something else."""
    s = lpm_sched()
    shared = cached(s, token_ids(8, 61))
    for uid, extra, max_tokens in (first, second):
        add_waiting(s, uid, shared + token_ids(extra, 62 + uid), max_tokens=max_tokens, pages=2)
    hide_engine_answer(s)
    try:
        batch = fn(s)
    except Exception:
        return None
    if not isinstance(batch, Batch) or not batch.is_prefill or not batch.items:
        return None
    return batch.items[0].req.uid


# Each key: the play where the later arrival wins by that key, the same play with the key swapped
# between the two, the scene in words, and the key. The requests are (uid, prompt tokens after the
# cached prefix, max_tokens), in arrival order.
_KEYS = [
    (((1, 2, 8), (2, 9, 8)), ((1, 9, 8), (2, 2, 8)), "prompts of 10 and 17 tokens", "the longer prompt"),
    (((1, 9, 8), (2, 2, 8)), ((1, 2, 8), (2, 9, 8)), "prompts of 17 and 10 tokens", "the shorter prompt"),
    (((2, 4, 8), (1, 4, 8)), ((1, 4, 8), (2, 4, 8)), "prompts of 12 tokens", "the lower uid"),
    (((1, 4, 2), (2, 4, 12)), ((1, 4, 12), (2, 4, 2)), "max_tokens 2 and 12", "the larger max_tokens"),
    (((1, 4, 12), (2, 4, 2)), ((1, 4, 2), (2, 4, 12)), "max_tokens 12 and 2", "the smaller max_tokens"),
]


def tie_breaker(fn) -> Optional[Mistake]:
    """The Mistake for ties broken by something other than arrival: for each key, the first play has
    the later arrival winning by that key, where the answer must put the first arrival first. When it
    puts the later one first, the second play (the key swapped) tells whether that key decided it."""
    for play, swapped, scene, key in _KEYS:
        early, late = play[0][0], play[1][0]
        if _first(fn, *play) != late:
            continue
        follows = _first(fn, *swapped) == swapped[0][0]  # the winner moved with the key
        said = f"; with the two swapped, yours again put {key} first: you break ties by {key} first" if follows else ""
        return Mistake(
            f"requests {early} then {late} arrive with 2 cached prefix pages each ({scene}), and yours put "
            f"request {late}, the later arrival, first{said}. Equal matches keep their arrival order",
            TIES_HINT.format(f", not {key} first (yours broke the tie by {key})" if follows else ""),
        )
    return None
