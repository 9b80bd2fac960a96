"""The order of `scheduler.waiting` after an abort, shared by exercise 2 and its stretch.

`scheduler.waiting` is served first come, first served: an abort takes out the aborted request
itself and leaves every other waiting request where it was, in the same order. A removal that
swaps the aborted request with the last one and pops (O(1), but not order-keeping) moves the last
request forward, ahead of requests that arrived before it. The generated scenes rarely hold three
requests waiting at once, so this check builds that queue on purpose: four requests added, none
admitted yet, the second one aborted.
"""

from __future__ import annotations

from minisgl_edu.grading.abort.checks import GREEDY, LONG, OTHER, SHORT, abort, check_gone, start
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import encode

PROMPTS = (SHORT, LONG, OTHER, SHORT)


def check_waiting_order(fn) -> None:
    """Four requests wait (none admitted); abort uid 1; the others stay in arrival order [0, 2, 3].

    The hint names a reordering only when the same requests are left and only their order differs;
    a request left behind or taken out by mistake is reported by `check_gone` first."""
    s = start(fn)
    for uid, prompt in enumerate(PROMPTS):
        s.add_request(uid, encode(s, prompt), GREEDY)
    before = [r.uid for r in s.waiting]
    abort(s, 1)
    check_gone(s, 1)
    got, want = [r.uid for r in s.waiting], [u for u in before if u != 1]
    if got != want and sorted(got) == sorted(want):
        swapped = list(before)
        swapped[before.index(1)] = swapped[-1]
        swapped.pop()
        how = (
            "swapping the aborted request with the last one and popping moved the last request ahead of earlier "
            "arrivals: remove the request itself (waiting.remove(req))"
            if got == swapped
            else "take out the aborted request itself and leave the rest of the deque as it was"
        )
        raise Mistake(
            f"after aborting uid 1 of the waiting requests {before}, scheduler.waiting is {got}, expected {want}",
            "touch only the aborted request: the others stay in scheduler.waiting in the same order (first come, "
            f"first served); {how}",
        )
    assert got == want, f"after aborting uid 1, scheduler.waiting is {got}, expected {want}"
