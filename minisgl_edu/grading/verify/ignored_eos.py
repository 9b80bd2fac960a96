"""Exercise 8: an end id that ignore_eos lets pass, left out of the tokens.

ignore_eos turns off the EOS test only. The end id is still a token the model gave (greedy decoding one
token at a time gives it too, and the positions after it were computed with it in place), so it goes
into `tokens` like any other token and counts toward max_new_tokens, kv_len and the pages. An answer
that drops it (a `continue` before the append: "the EOS is ignored") keeps one token fewer for each
ignored end id. On a failing step that can look like other mistakes of the tokens, so the unit cases
(step.py) and the generated phase (scenes.py) name it only when the answer's result is the one that
mistake gives (plain.py) and, on two small steps of its own, the answer keeps exactly the run without
its end id: an accepted end id as draft 1, and the model's own token an end id.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.plain import answers_with
from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest

DROPPED = "ignored_eos_dropped"  # its key in mistakes.MISTAKES


def drops_ignored_eos(fn) -> bool:
    """With ignore_eos set, the answer keeps [two, three, four] of the run [two, 2, three, four] (2 an
    accepted draft), and [two] of the run [two, 0] (0 the model's own token): every token but the end ids."""
    one, two, three, four = _w(" one", " two", " three", " four")
    try:
        inside = _call(fn, _req([one], 3, ignore_eos=True), [two, 2, three], [two, 2, three, four])
        last = _call(fn, _req([one], 1, ignore_eos=True), [two], [two, 0])
    except Exception:
        return False
    return list(inside.tokens) == [two, three, four] and list(last.tokens) == [two]


def drops_it_here(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> bool:
    """On this step the answer's result is the one that dropping the ignored end ids gives (and not the
    package's), and its small steps show that it drops them."""
    return answers_with(fn, req, drafts, targets, DROPPED) and drops_ignored_eos(fn)
