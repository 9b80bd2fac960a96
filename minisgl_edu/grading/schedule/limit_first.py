"""Exercise 5: the request limit checked after `cache.admit`, told apart from other row mistakes.

`cache.admit(req)` takes a page-table row, and the engine's page table has exactly
`scheduler.max_running` rows when its config names no smaller limit (the grader's scheduler too:
4 rows, a limit of 4). An answer that admits first and checks `scheduler.max_running` afterwards,
undoing a refusal, works while rows are spare, as in the limit case's scheduler (2 of 4 rows), but
with every row taken, `cache.admit` itself fails: "no free page-table row". That message alone fits
any answer that admits too many requests, so `check_limit_before_admit` asks the answer a probe of
its own, with rows to spare: one request decoding, a limit of 1, one waiting; the probe watches
`cache.admit` and confirms that the waiting request was handed to it though the limit was reached.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import decide, sched

LIMIT_FIRST_HINT = (
    "check the request limit before cache.admit: when len(admitted) >= scheduler.max_running, return "
    "False without admitting. cache.admit takes a page-table row, and the engine has only as many rows as "
    "the limit, so admitting first and undoing the refusal fails once every row is taken"
)


def admits_past_the_limit(fn) -> bool:
    """Whether `fn` hands a request to cache.admit while scheduler.max_running requests are admitted."""
    s = sched(max_running_requests=1)  # 4 rows: admitting a second request does not fail here
    decoding(s, 0, 8)
    late = waiting(s, 1, 5)
    handed: list[int] = []
    admit = s.cache.admit

    def watched_admit(req, *args, **kwargs):
        handed.append(req.uid)
        return admit(req, *args, **kwargs)

    s.cache.admit = watched_admit
    try:
        fn(s)
    except Exception:
        return False
    finally:
        del s.cache.admit
    return late.uid in handed and late.table_idx < 0


def check_limit_before_admit(fn) -> None:
    """Every row taken (4 requests decoding, a limit of 4, as in the engine) and one waiting: the
    answer must decode, without touching a fifth row."""
    s = sched()
    assert s.max_running == s.cache.page_table.max_reqs, "setup: as many rows as the request limit"
    for uid in range(s.max_running):
        decoding(s, uid, 8)
    waiting(s, s.max_running, 5)
    try:
        decide(fn, s)
    except AssertionError as e:
        if "page-table rows" not in str(e) or not admits_past_the_limit(fn):
            raise
        raise Mistake(
            f"{s.max_running} requests decode, scheduler.max_running is {s.max_running} and the page table has "
            f"{s.max_running} rows, as in the engine; request {s.max_running} waits, and {e}. Your try_admit calls "
            "cache.admit before it checks the limit: with a limit of 1, one request decoding and rows to spare, "
            "it hands the waiting request to cache.admit and then undoes it",
            LIMIT_FIRST_HINT,
        ) from None
