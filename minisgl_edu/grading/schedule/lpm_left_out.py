"""Exercise 5's stretch: a batch in the right order that stops early.

Longest prefix match changes only the order in which the requests not yet admitted are
considered; every one that fits the token budget and the pages is still admitted in the same
step, a request with no cached prefix too (it sorts last, after those with a cache hit). An
answer that leaves those out (for example, "when some request has a cache hit, the others wait a
step") gives a batch whose order is right and whose tail is missing.

`check_left_out(batch, want, s)` is asked by a case whose expected batch `want` is known: when the
answer's batch is a proper beginning of `want`, it names the requests left out and, when none of
them has a cached prefix while a request in the batch has one, says so.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.schedule.checks import prefix_pages
from minisgl_edu.scheduler import Scheduler


def check_left_out(batch: Optional[Batch], want: list[int], s: Scheduler) -> None:
    """Raise when the prefill batch holds `want`'s first requests, in order, and not the rest."""
    got = [it.req.uid for it in batch.items] if isinstance(batch, Batch) and batch.is_prefill else None
    if not got or len(got) >= len(want) or got != want[: len(got)]:
        return
    missing = want[len(got) :]
    pages = {r.uid: prefix_pages(s, r) for r in list(s.waiting) + list(s.running)}
    shown = ", ".join(f"request {u}: {pages.get(u, 0)}" for u in want)
    message = (
        f"your prefill batch holds requests {got} in the right order and stops there: requests {missing} fit "
        f"the budget and the pages too, and longest prefix match admits them in this step (cached prefix "
        f"pages: {shown})"
    )
    if all(pages.get(u, 0) == 0 for u in missing) and any(pages.get(u, 0) > 0 for u in got):
        raise Mistake(
            message,
            f"requests with no cached prefix ({missing}) sort last, they are not left out: after the requests "
            "with a cache hit, keep admitting the others in the same step while the budget and the pages last",
        )
    raise Mistake(
        message,
        f"the order only decides who goes first: keep admitting after the first requests while the budget and "
        f"the pages last (requests {missing} were left out)",
    )
