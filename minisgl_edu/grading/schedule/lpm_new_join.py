"""Exercise 5's stretch: new requests join the batch behind a chunked prefill.

A request part-way through its prompt goes first, and the requests not yet admitted fill what is
left of the token budget after its chunk, as in the base part. An answer that walks either the
chunked requests or the new ones (`for req in started or new:` gives `started` alone whenever it
is not empty) leaves every new request out while a chunked prefill is under way, even with most of
the budget left.

`check_new_join(fn, s, batch, started)` is asked by a case whose batch holds only the chunks of
requests admitted at an earlier step (`started`), with budget left and a request not yet admitted
waiting. A probe of its own confirms the mistake: request 0 has its last 4 prompt tokens to go and
request 1 (5 tokens) waits, budget 16: the answer leaves request 1 out, though it admits request 1
when request 0 is not there.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import apply, token_ids
from minisgl_edu.grading.schedule.checks import add_waiting, hide_engine_answer, items_of, lpm_sched
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule_next_batch

NEW_JOIN_HINT = (
    "the requests part-way through their prompt go first, then the requests not yet admitted fill what is left "
    "of the token budget: walk the two lists one after the other (started + new), not one or the other"
)


def _beside_a_chunk(chunked: bool) -> Scheduler:
    """Budget 16; request 1 (5 tokens, nothing cached) waits. With `chunked`, request 0 (20 tokens)
    arrived first and has had one 16-token chunk: 4 tokens to go."""
    s = lpm_sched(budget=16)
    if chunked:
        add_waiting(s, 0, token_ids(20, 31), pages=0)
        apply(s, package_schedule_next_batch(s))  # only request 0 waits: any order
    add_waiting(s, 1, token_ids(5, 32), pages=0)
    hide_engine_answer(s)
    return s


def _plain(fn, chunked: bool):
    """The answer's batch on the probe's scene, without the checks of `decide`."""
    try:
        return items_of(fn(_beside_a_chunk(chunked)))
    except Exception:
        return None


def leaves_new_out(fn) -> bool:
    """Whether `fn` gives request 0's last chunk alone, and admits request 1 when request 0 is not there."""
    if _plain(fn, chunked=True) != ("prefill", [(0, 16, 4)]):
        return False
    return _plain(fn, chunked=False) == ("prefill", [(1, 0, 5)])


def check_new_join(fn, s: Scheduler, batch: Optional[Batch], started: list[int]) -> None:
    """`started`: the uids that held a row in scheduler.waiting before the decision."""
    if batch is None or not batch.is_prefill or not started:
        return
    if any(it.req.uid not in started for it in batch.items):
        return
    used = sum(it.num_tokens for it in batch.items)
    new = [r.uid for r in s.waiting if r.table_idx < 0]
    if used >= s.max_prefill_tokens or not new or not leaves_new_out(fn):
        return
    raise Mistake(
        f"your prefill batch holds only the chunk of request(s) {started}, part-way through their prompt: "
        f"{used} of the {s.max_prefill_tokens}-token budget, while request(s) {new} wait, not admitted. A probe "
        "shows the same: request 0 has its last 4 prompt tokens to go and request 1 (5 tokens) waits, budget 16; "
        "yours gives request 0's 4 tokens alone, and admits request 1 when request 0 is not there. While a chunked "
        "prefill is under way no new request joins your batch",
        NEW_JOIN_HINT,
    )
