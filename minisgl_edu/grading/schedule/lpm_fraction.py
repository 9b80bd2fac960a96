"""Exercise 5's stretch: the sort key is the number of cached pages, not the share of the prompt
they cover.

A request with a long prompt and a long cached prefix can have a smaller share of its prompt cached
than a short request with a short cached prefix: sorted by that share (matched tokens / prompt
length), the short one goes first, though it saves fewer pages. `fraction_play(fn)` (a play of the
case "longest cached prefix first") shows such a scene and names the share as the key when the
answer's order is the one it gives; a control scene, the short request's prompt made longer so
that its share falls below the long one's, must then give the right order. `by_fraction` gives the
same order for the generated phase's hint, from what it knows of each waiting request.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import cached, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, decide_in_order, lpm_sched, show

FRACTION = (
    "sort by the number of cached pages, len(scheduler.cache.match(req)[1]), most first: not by the share of "
    "the prompt they cover (matched tokens / len(req.input_ids)); a long prompt with a long cached prefix saves "
    "more pages than a short one mostly cached"
)


def by_fraction(uids: list[int], info: dict) -> list[int]:
    """`uids` (in arrival order) sorted as a stable sort by the share of each prompt that is cached,
    largest first; `info[uid]` holds "cached_pages" and "prompt" (the prompt's length in tokens)."""
    return sorted(uids, key=lambda u: -info[u]["cached_pages"] / max(info[u]["prompt"], 1))


def fraction_hint(new: list[int], first: int, arrival: list[int], info: dict) -> str | None:
    """The generated phase's hint when the new requests of the answer's batch (`new`) come in the order
    of the cached share of their prompts, where the reference's first new request is `first`. On a tie
    in cached pages the share puts the shorter prompt first: the hint then says that neither breaks a tie."""
    if new != by_fraction(arrival, info)[: len(new)]:
        return None
    mine, theirs = info[new[0]]["cached_pages"], info[first]["cached_pages"]
    if mine != theirs:
        return FRACTION
    if mine and info[new[0]]["prompt"] < info[first]["prompt"]:
        return (
            f"requests {first} and {new[0]} both have {mine} cached page(s), and yours put {new[0]}, whose prompt is "
            "shorter (a larger share of it cached), first: the key is the number of cached pages alone, so with as "
            "many they keep their arrival order; neither the prompt's length nor the share of it that is cached "
            "(matched tokens / len(req.input_ids)) breaks a tie"
        )
    return None


def _scene(tail: int):
    """Request 0: 6 tokens, nothing cached; request 1: 54 tokens, the first 24 (6 pages) cached;
    request 2: 8 cached tokens (2 pages) and `tail` more."""
    s = lpm_sched()
    shared = cached(s, token_ids(32, 90))
    add_waiting(s, 0, token_ids(6, 91), pages=0)
    add_waiting(s, 1, shared[:24] + token_ids(30, 92), pages=6)
    add_waiting(s, 2, shared[:8] + token_ids(tail, 93), pages=2)
    return s


def _order(fn, tail: int) -> list[int]:
    batch = decide_in_order(fn, _scene(tail))
    return [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else []


def fraction_play(fn) -> None:
    """The order of three requests whose cached pages and cached shares disagree: 1 (6 pages, 24 of 54
    tokens), 2 (2 pages, 8 of 10 tokens), 0 (nothing cached); the share would put 2 first."""
    s = _scene(2)
    batch = decide_in_order(fn, s)
    got = [it.req.uid for it in batch.items] if batch is not None and batch.is_prefill else []
    what = (
        "requests 0, 1, 2 arrive in that order: request 0 (6 tokens) has nothing cached, request 1 (54 tokens) "
        "6 cached prefix pages (24 tokens), request 2 (10 tokens) 2 cached pages (8 tokens). Most cached pages "
        f"first: the prefill batch should hold requests [1, 2, 0] in that order, yours is {show(batch)}"
    )
    if got == [2, 1, 0] and _order(fn, 20) == [1, 2, 0]:
        raise Mistake(
            f"{what}. Yours put request 2 first, whose cached 8 tokens are 80% of its prompt, against 24 of 54 "
            "(44%) for request 1; with 20 more tokens in request 2's prompt (8 of 28 cached, 29%), yours puts "
            "request 1 first. You sort by the share of the prompt that is cached, not by the cached pages",
            FRACTION,
        )
    assert got == [1, 2, 0], what
