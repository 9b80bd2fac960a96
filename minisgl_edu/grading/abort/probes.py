"""Probes of exercise 2's graders: the answer re-run on a small scene of its own, to name a mistake.

A failed check sees a symptom (a row still in use, too few pages cached); these probes tell which
mistake makes it. `skips_row_zero` aborts two decoding requests on rows 0 and 1 (an answer that
takes table_idx 0 for "no row" gives back only the second); `drops_a_computed_token`,
`caches_the_prompt_only` and `empties_the_output` (the stretch) abort a request with 3 full computed pages, 1 of them the
prompt's, and count what went into the prefix cache (and the output tokens release() saw); `carried_over` gives two fresh schedulers a
request of the same uid (state kept outside the scheduler shows on the second). Each probe builds its own scheduler and
returns False (or -1) when the answer does not get that far: the failed check's own hint stands.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any, Callable, Optional

from minisgl_edu.core import ReqStatus
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, modelless, step_until, waiting
from minisgl_edu.grading.harness import new_scheduler

# uids no case uses, a new one for each probe: what an answer remembers of the cases before is not met
_PROBE_UIDS = itertools.count(7_000_000)


def probe_uid() -> int:
    """A uid that no case and no earlier probe used (the probes of every module of this folder share them)."""
    return next(_PROBE_UIDS)


class _RemembersMisses:
    """A queue whose remove() remembers, in .not_found, each item it did not find (then raises as before)."""

    def __init__(self, items) -> None:
        super().__init__(items)
        self.not_found: list = []

    def remove(self, value) -> None:
        try:
            super().remove(value)
        except ValueError:
            self.not_found.append(value)
            raise


class MissList(_RemembersMisses, list):
    """scheduler.running as a list that remembers each request its remove() did not find."""


class MissDeque(_RemembersMisses, deque):
    """scheduler.waiting as a deque that remembers each request its remove() did not find."""


def scheduler_with(fn):
    """A fresh scheduler on the grader's tiny model whose abort is `fn`."""
    s = new_scheduler()
    s.abort_fn = fn
    return s


ROW_ZERO = (
    "row 0 is a real page-table row (the first admitted request often gets it); table_idx is -1 when the "
    "request has none. Test req.table_idx < 0 (or >= 0), not its truth value or > 0, which take row 0 for "
    "no row; release(req, ...) itself does nothing for a request without a row"
)


def skips_row_zero(fn) -> bool:
    """Of two decoding requests, `fn` gives back the one on row 1 and leaves the one on row 0 holding
    its row: it takes table_idx 0 for "no row"."""
    s = scheduler_with(fn)
    on_row = {decoding(s, uid, 6).table_idx: uid for uid in (0, 1)}
    if sorted(on_row) != [0, 1]:
        return False
    try:
        s.abort(on_row[1])
        s.abort(on_row[0])
    except Exception:
        return False  # some other mistake: the hint of the failed check names it
    used = s.cache.page_table.used_rows()
    return 0 in used and 1 not in used


DROPS_A_COMPUTED_TOKEN = (
    "req.cached_len already leaves the newest sampled token out (it counts only tokens whose K/V is written): "
    "use it as it is, never minus one"
)


def abort_spied(fn, computed: int, seen_of: Callable[[Any], int]) -> Optional[tuple[Any, list[int], list[int]]]:
    """Abort, with `fn`, a request with a 5-token prompt once `computed` of its tokens have K/V written, on a
    modelless scheduler with a radix cache of its own. Returns the scheduler, the request's ids just before
    the abort, and `seen_of(req)` read at each release() of that request (release() reads the request as the
    abort left it); None when the probe does not get that far."""
    s = modelless(cache="radix")
    s.abort_fn = fn
    req = waiting(s, 0, 5, max_tokens=20)
    seen: list[int] = []
    inner = s.cache.release

    def release(r, cache_it: bool = True) -> None:
        if r is req:
            seen.append(seen_of(r))
        return inner(r, cache_it)

    try:
        step_until(s, lambda: req.output_ids and req.cached_len == computed, f"cached_len {computed}", max_steps=40)
        ids = list(req.all_ids)
        s.cache.release = release
        s.abort(0)
    except Exception:
        return None  # some other mistake: the hint of the failed check names it
    return s, ids, seen


def _aborted_at_12(fn) -> tuple[int, bool]:
    """Abort, with `fn`, a request with a 5-token prompt at cached_len 12 (3 full computed pages, 1 of them
    the prompt's): how many pages went into the prefix cache (-1 when the probe does not get that far),
    and whether the release() it asked for saw fewer output tokens than the request had."""
    # release() caches all_ids[:cached_len], the prompt plus the output: count the output it saw
    got = abort_spied(fn, 12, lambda r: len(r.output_ids))
    if got is None:
        return -1, False
    s, ids, seen = got
    had = len(ids) - 5  # the output tokens: all_ids less the 5-token prompt
    return len(s.cache.prefix_cache.match_prefix(ids)[1]), bool(seen) and min(seen) < had


def drops_a_computed_token(fn) -> bool:
    """`fn` caches 2 of 3 computed pages: it takes the newest token off req.cached_len once more."""
    return _aborted_at_12(fn)[0] == 2


def empties_the_output(fn) -> bool:
    """`fn` caches only the prompt's page because release() found req.output_ids emptied (or cut)."""
    got, cut = _aborted_at_12(fn)
    return got == 1 and cut


def caches_the_prompt_only(fn) -> bool:
    """`fn` caches only the prompt's 1 full page of 3 computed: the output tokens left out (with the
    request's output intact, else `empties_the_output` names it)."""
    got, cut = _aborted_at_12(fn)
    return got == 1 and not cut


OUTPUT_EMPTIED = (
    "do not empty or cut req.output_ids before release(req, cache_it=True): release() caches "
    "req.all_ids[:req.cached_len], the prompt plus the output, so without the output only the prompt's "
    "pages can be filed. The client is told by the abort message; the tokens stay on the request"
)


PROMPT_ONLY = "the output tokens computed so far count too: count req.cached_len, not the prompt's length"


def row_zero(row: int) -> Mistake:
    return Mistake(
        f"the request's page-table row ({row}) was not given back: your abort gives back a request on row 1 "
        "with its row and pages, but leaves one on row 0 holding them",
        ROW_ZERO,
    )


CARRIED_OVER = (
    "state kept outside the scheduler (a module-level or class-level set/dict) carried over from an earlier "
    "scheduler: two fresh schedulers must not share what your abort remembers. Read what the scheduler holds "
    "(a uid is live while it is a key of scheduler.reqs), or keep your own state on the scheduler"
)


def _aborts_cleanly(fn, uid: int) -> bool:
    """On a fresh scheduler, `fn` aborts the decoding request `uid`: True back, the uid gone, marked finished."""
    s = scheduler_with(fn)
    req = decoding(s, uid, 6)
    try:
        got = s.abort(uid)
    except Exception:
        return False
    return got is True and uid not in s.reqs and req.status == ReqStatus.FINISHED


def carried_over(fn) -> bool:
    """`fn` aborts a request on one fresh scheduler, and fails to abort a request of the same uid on a
    second fresh one: something it remembers outlived the first scheduler."""
    uid = probe_uid()
    return _aborts_cleanly(fn, uid) and not _aborts_cleanly(fn, uid)


def carried_over_mistake(uid: int, got: object) -> Mistake:
    return Mistake(
        f"aborting a live request (uid {uid}) returned {got!r}. Your abort, given a request of one uid on each of "
        "two fresh schedulers, aborts the first and not the second, while that uid is a key of its scheduler.reqs: "
        "it remembers something outside the scheduler (a module-level or class-level set or dict), and what it "
        "kept from an earlier scheduler decides for this one",
        CARRIED_OVER,
    )
