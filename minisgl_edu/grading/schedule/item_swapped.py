"""Exercise 5's probe for a prefill item built as ScheduledReq(req, num_tokens, start), called by
checks.check_batch when a prefill item does not start at req.cached_len or computes no token.

The fields are ScheduledReq(req, start, num_tokens). With the two swapped, a request with a cached
prefix gets a chunk that "starts" at its chunk's length, and a request with nothing cached gets an item
of 0 tokens: the symptoms of a chunk that restarts, or of a budget used up. The probe confirms the swap
on a scene of its own: request 0 finds 8 tokens of its 14-token prompt cached, request 1 (5 tokens)
finds none, budget 64. The right items are (0, start 8, 6 tokens) and (1, start 0, 5 tokens); an answer
whose items are exactly these with start and count swapped built them in the wrong order. This module
imports nothing from checks.py, which calls it.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.harness import new_scheduler

ITEM_SWAPPED = (
    "the fields are ScheduledReq(req, start, num_tokens): the start (req.cached_len) comes second, the number "
    "of tokens (the chunk) third. Yours passes them the other way round, ScheduledReq(req, chunk, "
    "req.cached_len)"
)

RIGHT = [(0, 8, 6), (1, 0, 5)]  # the reference's items on the probe's scene: (uid, start, num_tokens)


def _items(fn):
    """The answer's items on the probe's scene, without the checks of `decide`."""
    s = new_scheduler(max_prefill_tokens=64, cache="radix")
    prefix = cached(s, token_ids(8, 181))  # two pages of request 0's prompt
    s.add_request(0, prefix + token_ids(6, 182), SamplingParams(max_tokens=8, ignore_eos=True))
    s.add_request(1, token_ids(5, 183), SamplingParams(max_tokens=8, ignore_eos=True))
    try:
        return [(it.req.uid, it.start, it.num_tokens) for it in fn(s).items]
    except Exception:
        return None


def check_item_swapped(fn) -> None:
    """Raise the mistake when `fn` (None: no probe) gives the right items of the probe's scene with each
    item's start and number of tokens swapped."""
    if fn is None or _items(fn) != [(uid, count, start) for uid, start, count in RIGHT]:
        return
    raise Mistake(
        "a prefill item does not start where its request's cache ends. A probe shows why: request 0 finds 8 of "
        "its 14 prompt tokens cached and request 1 (5 tokens) none; the items are (request 0, start 8, 6 tokens) "
        "and (request 1, start 0, 5 tokens), and yours are (request 0, start 6, 8 tokens) and (request 1, "
        "start 5, 0 tokens): the right numbers, start and count swapped",
        ITEM_SWAPPED,
    )
