"""The token budget on the scheduler, watched across one scheduling decision (both parts of exercise 5).

`scheduler.max_prefill_tokens` is a setting: every prefill batch may compute that many prompt tokens.
A decision that counts what it spends down on the scheduler itself (`scheduler.max_prefill_tokens -=
chunk`) leaves later steps a smaller budget, and 0 once a long prompt has used it up: no prompt token
is scheduled again. Every later check then reads the changed budget (a batch of 16 tokens "over a
budget of 0"), so the change itself is named first, from the value read before the decision.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.scheduler import Scheduler

BUDGET_SPENT = (
    "scheduler.max_prefill_tokens is the budget of every prefill batch, a setting each step starts from again: "
    "read it, and count what this batch spends in a variable of your own (budget = scheduler.max_prefill_tokens, "
    "then budget -= chunk), never on the scheduler"
)


def check_budget_kept(s: Scheduler, before: int) -> None:
    """`before`: scheduler.max_prefill_tokens read just before the decision."""
    if s.max_prefill_tokens != before:
        raise Mistake(
            f"your decision changed scheduler.max_prefill_tokens from {before} to {s.max_prefill_tokens}: the next "
            "prefill batch gets only what this one left of the budget",
            BUDGET_SPENT,
        )
