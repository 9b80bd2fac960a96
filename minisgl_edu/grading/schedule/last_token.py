"""Exercise 5's probe for a prefill that leaves the last prompt token out, called by `checks.decide`.

An answer that sizes a chunk as `len(req.input_ids) - 1 - req.cached_len` takes the prefix cache's
rule (cache.match leaves the last prompt token to compute) for "the first decode step computes it".
Each prompt then runs one token short, with budget left: a 9-token prompt gets a chunk of 8, and
the last token is never covered, so the request never leaves the prefill. Every case that looks at
a prefill batch sees a wrong chunk, and many mistakes make a wrong chunk, so the cause is checked
first: a prefill item that ends one token before the end of its prompt, with budget left after it
(the budget did not cut it), is named only when the answer, given a lone 5-token and a lone 9-token prompt with a budget
of 64 on schedulers of its own, schedules 4 and 8 of their tokens.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch, ScheduledReq
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.scheduler import Scheduler

LAST_TOKEN_LEFT = (
    "the prefill computes every prompt token, the last one too: its logits give the first output token. The "
    "chunk is min(req.remaining_prompt, budget), that is len(req.input_ids) - req.cached_len, never one less; "
    "the prefix cache leaves the last prompt token to compute (cache.match), and that computing is the prefill's"
)


def _chunk_alone(fn, n: int) -> Optional[int]:
    """The tokens `fn` schedules for a lone waiting `n`-token prompt, budget 64; None: no such batch."""
    s = new_scheduler(max_prefill_tokens=64, cache="naive")
    waiting(s, 0, n)
    try:
        batch = fn(s)
    except Exception:
        return None  # some other mistake: the failed check's own hint names it
    items = getattr(batch, "items", None)
    if not isinstance(batch, Batch) or not items or len(items) != 1 or not isinstance(items[0], ScheduledReq):
        return None
    return items[0].num_tokens if items[0].start == 0 else None


def leaves_the_last_token(fn) -> bool:
    """`fn` schedules 4 tokens of a lone 5-token prompt and 8 of a lone 9-token one, budget 64."""
    return _chunk_alone(fn, 5) == 4 and _chunk_alone(fn, 9) == 8


def check_last_token(s: Scheduler, batch, budget: int, fn) -> None:
    """`budget`: scheduler.max_prefill_tokens read before the decision that returned `batch`."""
    if fn is None or not isinstance(batch, Batch) or batch.phase != "prefill":
        return
    short, left = [], budget  # items one token short of their prompt that the budget did not cut
    for it in (it for it in batch.items if isinstance(it, ScheduledReq)):
        left -= it.num_tokens
        if left > 0 and it.start + it.num_tokens == len(it.req.input_ids) - 1:
            short.append((it, left))
    if not short or not leaves_the_last_token(fn):
        return
    it, after = short[0]
    raise Mistake(
        f"request {it.req.uid}: your prefill item covers {it.num_tokens} token(s) from {it.start}, ending one token "
        f"before the end of its {len(it.req.input_ids)}-token prompt, with {after} token(s) of the budget left after "
        "it. Your function, given a lone 5-token prompt and a lone 9-token one with a budget of 64 on schedulers of "
        "its own, schedules 4 and 8 of their tokens: it leaves the last prompt token out of the prefill, and no "
        "chunk ever computes it",
        LAST_TOKEN_LEFT,
    )
