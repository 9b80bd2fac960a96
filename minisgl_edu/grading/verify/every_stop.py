"""Exercise 8: a run that finishes only when the tail holds every stop string of the list.

`all(s in text for s in req.stop)` where `any(...)` is due: with one stop string the two agree, so
only a request with two or more shows it, and there a token that completes one of them goes on. On
such a step its result is often the one of a tail too short for the longer stop string (both miss
it), so the unit cases (step.py) and the generated phase (scenes.py) name it only when the answer,
on small steps of its own, finds ' two' alone, misses it beside 'xyz' (in either order), and finds
it again when ' one', earlier in the output, is the other stop string: every string of the list
had to show.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult


def _finds_two(fn, stop: tuple[str, ...]) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on the accepted draft ' two' after the output
    ' one' (the model's ' three' follows and is cut); None when it raises."""
    one, two, three = _w(" one", " two", " three")
    try:
        got = _call(fn, _req([one], 1, stop=stop), [two], [two, three])
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == [two]


def needs_every_stop(fn) -> bool:
    """The answer finishes on a stop string only when every stop string of the list shows."""
    alone = _finds_two(fn, (" two",))
    beside_other = [_finds_two(fn, (" two", "xyz")), _finds_two(fn, ("xyz", " two"))]
    both_shown = _finds_two(fn, (" two", " one"))
    return alone is True and beside_other == [False, False] and both_shown is True


def makes_every_stop(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> bool:
    """On this step the answer's result is the one all(...) gives (and not the reference's), and its
    probes show it needs every stop string."""
    if fn is None or len(req.stop) < 2:
        return False
    mistaken = _step(req, list(drafts), list(targets), "stop_all")
    if mistaken != got or mistaken == _step(req, list(drafts), list(targets)):
        return False
    return needs_every_stop(fn)
