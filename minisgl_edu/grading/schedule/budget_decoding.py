"""Exercise 5: the prefill token budget beside decoding requests, a case of "budget: exact fit".

Budget 20, two requests decoding, prompts of 13 and 7 tokens waiting: both prompts fit the budget
exactly, and the scheduler's limit of 4 admits both beside the two decoding requests. A prefill
batch that holds fewer prompt tokens has two causes the batch alone does not tell apart: a budget
the decoding requests took from (mistake 54), or a request limit reached one request early (the
fourth admitted request refused). The limit's probe (limit_one_early.py) is asked first; then a
control, the same prompts with nobody decoding: when they then fill the budget, the decoding
requests took the difference from it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import decide, expect, hide_engine_answer, items_of, sched, show
from minisgl_edu.grading.schedule.limit_one_early import ONE_EARLY, ONE_EARLY_HINT, refuses_one_early

BESIDE_DECODING = ("prefill", [(2, 0, 13), (3, 0, 7)])
SCENE = "budget 20, requests 0 and 1 decoding, prompts of 13 and 7 waiting"
DECODING_TAKES_NONE = (
    "the prefill token budget counts prefill tokens only: decoding requests do not take from it (they are not "
    "in a prefill batch, they wait for the next decode batch), so start from scheduler.max_prefill_tokens "
    "whatever scheduler.running holds"
)


def _beside_decoding(decoders: bool):
    """Budget 20, prompts of 13 and 7 tokens waiting (uids 2 and 3), with or without requests 0 and 1 decoding."""
    s = sched(budget=20)
    if decoders:
        decoding(s, 0, 5)
        decoding(s, 1, 6)
    waiting(s, 2, 13)
    waiting(s, 3, 7)
    return s


def check_budget_beside_decoding(fn) -> None:
    """The budget fits the two prompts exactly while two requests decode; a shorter prefill batch is
    blamed on the request limit if the limit's probe fires, else on the budget if the control fills it."""
    s = _beside_decoding(True)
    batch = decide(fn, s)
    got = items_of(batch)
    if got != BESIDE_DECODING and batch is not None and batch.is_prefill and batch.num_tokens < 20:
        if got == ("prefill", BESIDE_DECODING[1][:1]) and refuses_one_early(fn):
            raise Mistake(
                f"{SCENE}, scheduler.max_running is {s.max_running}: your answer gives {show(batch)}, though "
                f"both prompts fit the budget and the limit admits both beside the two decoding requests "
                f"{ONE_EARLY}",
                ONE_EARLY_HINT,
            )
        if _fills_the_budget_alone(fn):
            raise Mistake(
                f"{SCENE}: your prefill batch computes {batch.num_tokens} prompt tokens, {20 - batch.num_tokens} "
                "short of the budget, though both prompts fit it exactly; with nobody decoding it holds all 20: "
                "the decoding requests took from the budget",
                DECODING_TAKES_NONE,
            )
    expect(batch, BESIDE_DECODING, f"{SCENE}: both prompts fit the budget exactly")


def _fills_the_budget_alone(fn) -> bool:
    """The control: with nobody decoding, does `fn` give the two prompts the whole budget?"""
    s = _beside_decoding(False)
    hide_engine_answer(s)
    try:
        return items_of(fn(s)) == BESIDE_DECODING
    except Exception:
        return False
