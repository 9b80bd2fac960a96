"""Exercise 8: the model's own token appended after the token that finishes the request.

An answer that cuts the run at the first finish but then appends targets[n] all the same ("a step
always gives the model's token") keeps one token too many whenever an accepted draft finishes the
request. When the finish is on the last draft, its tokens are those of a loop without a break or of a
finish checked on the last token only (the whole run), so the unit cases (step.py) and the generated
phase (scenes.py) name it only when the answer, on two small steps of its own, keeps the finishing
draft followed by the model's token and nothing between: an EOS as draft 0 of three ('stop'), and
max_new_tokens reached at draft 0 of three ('length'). A loop without a break keeps the whole run
there, and the package's step stops on draft 0.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.plain import answers_with
from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest

AFTER_FINISH = "model_token_after_finish"


def appends_the_model_token(fn) -> bool:
    """On both small steps the answer keeps the finishing draft 0, then the model's token (targets[3]),
    with the reason of draft 0."""
    one, two, three, four, five = _w(" one", " two", " three", " four", " five")
    try:
        eos = _call(fn, _req([one], 3), [2, three, four], [2, three, four, five])
        length = _call(fn, _req([one] * 2, 3, max_new=3), [two, three, four], [two, three, four, five])
    except Exception:
        return False
    by_eos = (eos.tokens, eos.finish_reason) == ([2, five], "stop")
    return by_eos and (length.tokens, length.finish_reason) == ([two, five], "length")


def model_token_after_the_finish(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> bool:
    """On this step the answer's result is the one the step that appends the model's token after the
    finish gives (and not the package's), and its small steps show that step."""
    return answers_with(fn, req, drafts, targets, AFTER_FINISH) and appends_the_model_token(fn)
