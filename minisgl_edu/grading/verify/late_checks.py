"""Exercise 8: the finish checks run on the output before the token being checked was added to it.

`output = req.output_ids + tokens` built at the top of the loop, then `tokens.append(token)`: the EOS
test reads the token itself and is right, but the stop strings are looked for in, and the length is
counted on, an output that lacks the token being checked. A stop string completed by a token is
seen only on the next one, and 'length' comes one token past max_new_tokens, so the run keeps one
token after its finish (or goes on to its end when the finishing token is its last). On the length
alone this looks like a length test with > (step.py: length_one_past), which is why the probes
below also send a stop string: a length test off by one finds it on its own token.

step.py and scenes.py name the mistake only when the answer's result on the failing step is the one
of the step written that way, and the answer, on three small steps of its own, does the same.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.one_change import changed_step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step

LATE = (
    "the finish checks ran on the output before the token being checked was added to it (the output built from "
    "req.output_ids + tokens before tokens.append(token)): a stop string is seen one token after the token that "
    "completes it, and 'length' comes one token past max_new_tokens, so the run keeps a token after its finish "
    "(an end id, tested on the token itself, is right). Append the token first, then test the stop strings and "
    "the length on req.output_ids + tokens, which must hold the token being checked"
)
LATE_HINT = (
    "the finish checks ran on the output before the token being checked was added to it: append the token "
    "first, then check req.output_ids + tokens (this token included) for stop strings and the length"
)


def late_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The verify step with the stop strings and the length checked on the output without the token
    being checked (the EOS test on the token itself): the reference with only that one thing changed."""
    return changed_step(req, drafts, targets, late=True)


def _probes() -> list[tuple[VerifyRequest, list[int], list[int]]]:
    """A stop string 'two three' completed by accepted draft 1 (two drafts follow), the length reached by
    the model's token of a one-draft step (4 of max 4), and an end id as accepted draft 1: the first two
    tell the late checks from the right step, the third (right either way) from checks that skip EOS too."""
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    return [
        (_req([one], 3, stop=("two three",)), [two, three, four], [two, three, four, five]),
        (_req([one] * 2, 1, max_new=4), [two], [two, three]),
        (_req([one], 3), [two, 2, three], [two, 2, three, four]),
    ]


def checks_late(fn) -> bool:
    """On each probe the answer's result is the late step's (None when it raises: False)."""
    try:
        return all(_call(fn, _copy(r), list(d), list(t)) == late_step(r, d, t) for r, d, t in _probes())
    except Exception:
        return False


def late_here(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> bool:
    """On this step the answer's result is the late step's (and not the right one), and its probes show
    it checks late."""
    if fn is None:
        return False
    mistaken = late_step(_copy(req), list(drafts), list(targets))
    if mistaken != got or mistaken == package_step(_copy(req), list(drafts), list(targets)):
        return False
    return checks_late(fn)


def late_hint(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> Optional[str]:
    """LATE with its hint when the answer's result on this step is the late step's and its probes
    confirm it (the answer called here; None when it raises or does not)."""
    if fn is None:
        return None
    try:
        got = _call(fn, _copy(req), list(drafts), list(targets))
    except Exception:
        return None
    return f"{LATE} ({LATE_HINT})" if late_here(fn, req, drafts, targets, got) else None
