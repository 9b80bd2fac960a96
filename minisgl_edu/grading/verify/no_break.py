"""Exercise 8: a loop that keeps the first finish reason but does not stop there.

`if reason is None: reason = ...` with no `break` (or a `continue` once a reason is set) reports the
right finish, yet appends every token of the run after the one that finishes the request. On the
failing step its tokens are those of a finish checked on the run's last token only (both keep the
whole run), so the unit cases (step.py) and the generated phase (scenes.py) name it only when the
answer, on two small steps of its own, keeps the whole run with the first reason: an EOS as draft 1
('stop', where a check of the last token alone finds nothing), and max_new_tokens reached at draft 0
('length', where a length tested after the loop cuts the run, as EOS and stop strings do not).
"""

from __future__ import annotations

from minisgl_edu.grading.verify.plain import answers_with
from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest


def keeps_going(fn) -> bool:
    """On both small steps the answer keeps all four tokens of the run, with the reason of the
    first token that finished the request."""
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    try:
        eos = _call(fn, _req([one], 3), [two, 2, three], [two, 2, three, four])
        length = _call(fn, _req([one] * 2, 3, max_new=3), [two, three, four], [two, three, four, five])
    except Exception:
        return False
    by_eos = (eos.tokens, eos.finish_reason) == ([two, 2, three, four], "stop")
    return by_eos and (length.tokens, length.finish_reason) == ([two, three, four, five], "length")


def goes_on_after_the_finish(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> bool:
    """On this step the answer's result is the one a loop without a break gives (and not the
    package's), and its small steps show that loop."""
    return answers_with(fn, req, drafts, targets, "no_break") and keeps_going(fn)
