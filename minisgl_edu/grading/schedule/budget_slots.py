"""Exercise 5: the token budget counted in page slots, told apart from other budget mistakes.

`scheduler.max_prefill_tokens` counts the prompt tokens a prefill batch computes. A chunk does
occupy whole pages of the KV cache (`reserve` gives it `pages_for(end, page_size)`), and an answer
that takes those pages' slots off the budget, `pages_for(chunk, page_size) * page_size`, is right
whenever every chunk is a multiple of the page size; with a 5-token prompt it charges 8, and the
next request's chunk comes out 3 tokens short. The budget case's failure alone looks like any
miscount, so `check_budget_in_page_slots` asks the answer two probes of its own, budget 16 and a
20-token prompt behind a first prompt of 5 and then of 9 tokens: only a count in whole pages' slots
cuts the second chunk to 8 and then to 4 tokens (11 and 7 are right).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.schedule.checks import decide, items_of, sched, show, show_expected
from minisgl_edu.kvcache import pages_for

PAGE_SLOTS_HINT = (
    "the budget counts tokens, not page slots: take each item's chunk (num_tokens) off "
    "scheduler.max_prefill_tokens, not pages_for(chunk, page_size) * page_size. The pages a chunk "
    "occupies are reserve's business; a 5-token chunk costs 5 of the budget"
)


def _second_chunk(fn, first: int) -> object:
    """The answer's batch for prompts of `first` and 20 tokens with a budget of 16 (None on a crash)."""
    s = sched(budget=16)
    waiting(s, 0, first)
    waiting(s, 1, 20)
    try:
        return items_of(decide(fn, s))
    except Exception:
        return None


def counts_page_slots(fn, page_size: int = 4) -> bool:
    """Whether `fn` charges each chunk its whole pages' slots, on both probes."""
    for first in (5, 9):
        slots = pages_for(first, page_size) * page_size
        if _second_chunk(fn, first) != ("prefill", [(0, 0, first), (1, 0, 16 - slots)]):
            return False
    return True


def check_budget_in_page_slots(fn, batch, expected: tuple, what: str) -> None:
    """In a budget case (`what`) whose batch is not `expected`: raise when `fn` counts the budget in
    page slots."""
    if items_of(batch) == expected or not counts_page_slots(fn):
        return
    raise Mistake(
        f"{what}: expected {show_expected(expected)}, got {show(batch)}. Your prefill batch takes whole pages' slots off the token budget. With a budget of 16, a 5-token prompt and a "
        "20-token one, your second chunk is 8 tokens (16 - 8, the two pages the 5 tokens occupy) where 11 are "
        "left; after a 9-token prompt it is 4, not 7",
        PAGE_SLOTS_HINT,
    )
