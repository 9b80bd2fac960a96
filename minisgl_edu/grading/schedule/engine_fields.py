"""The request fields the engine owns, watched across one scheduling decision.

A decision only chooses what runs next: it admits (`cache.admit` sets a new request's row,
`req.prefix_len` and `req.cached_len` to its cached prefix), reserves pages and sets a prompt's
status. What the request has computed and produced is the engine's: `req.cached_len` moves on when
a chunk's batch has run (`Scheduler.advance`), and `req.input_ids`, `req.output_ids` and
`req.max_new_tokens` are never the scheduler's to change. A decision that advances `cached_len`
itself makes the engine advance it a second time, and every later check reads the changed field
(the next chunk seems to start in the wrong place), so the change itself is named first.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.scheduler import Scheduler

HINT = (
    "schedule only decides what runs: leave the request's fields that the engine owns as they were "
    "(req.cached_len moves on when the chunk's batch has run, Scheduler.advance does it; output_ids, "
    "input_ids and max_new_tokens are never the scheduler's); build the item from req.cached_len, do not "
    "change it"
)


def snapshot(s: Scheduler) -> dict:
    """uid -> (request, its row, cached_len, input_ids, output_ids, max_new_tokens) before the decision."""
    reqs = list(s.waiting) + list(s.running)
    return {
        r.uid: (r, r.table_idx, r.cached_len, list(r.input_ids), list(r.output_ids), r.max_new_tokens) for r in reqs
    }


def check_engine_fields(before: dict) -> None:
    """Each request's engine-owned fields after the decision are those before it; a request admitted
    by this decision has cached_len == prefix_len (what cache.admit set). A request whose row changed
    (admitted again) or that was refused is left to the checks that name those mistakes."""
    for uid, (r, row, cached, ids, out, max_new) in before.items():
        for name, was, now in (
            ("input_ids", ids, list(r.input_ids)),
            ("output_ids", out, list(r.output_ids)),
            ("max_new_tokens", max_new, r.max_new_tokens),
        ):
            if was != now:
                raise Mistake(f"your decision changed request {uid}'s req.{name} from {was} to {now}", HINT)
        if row >= 0 and r.table_idx == row:
            want, why = cached, "before your decision"
        elif row < 0 and r.table_idx >= 0:
            want, why = r.prefix_len, "the cached prefix cache.admit found (req.prefix_len)"
        else:
            continue
        if r.cached_len != want:
            raise Mistake(
                f"request {uid}'s req.cached_len is {r.cached_len} after your decision, but {want}, "
                f"{why}, is what the engine has computed: the decision changed it",
                HINT,
            )
