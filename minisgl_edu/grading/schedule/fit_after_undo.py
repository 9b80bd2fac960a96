"""Exercise 5: a refused admission undone, and then the fit read again.

try_admit decides once whether the request's whole run fits, after `cache.admit` (the request's
cached prefix is locked then, so its pages are neither counted in its need nor available). A
refusal is undone with `cache.release(req, cache_it=False)`, which unlocks that prefix: its pages
are evictable again, so `cache.num_available` grows by them. An answer that undoes the refusal and
then returns `need <= cache.num_available`, reading the pages again, counts the prefix it just gave
back: when the shortfall is no more than the prefix pages it says True for a request that holds no
row, and the batch plans a prefill for a request that was never admitted.

That message alone ("in the batch but was never admitted") fits any answer that skips
`cache.admit`, so `undone_then_planned(fn)` asks the answer a probe of its own: 12 pages available,
4 of them a cached prefix no request holds, and one request whose prompt starts with that prefix.
With a run of 14 pages (2 short after admission, fewer than the 4 the undo gives back) the probe
confirms that the request was handed to `cache.release` and still put in the batch; with a run of
18 pages (6 short, more than the 4) that it was left out.
"""

from __future__ import annotations

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import ballast, cached, token_ids, waiting
from minisgl_edu.grading.harness import new_scheduler

REREAD_HINT = (
    "decide the fit once, and return False after undoing a refusal: cache.release(req, cache_it=False) unlocks "
    "the request's cached prefix, so cache.num_available read after the undo counts those pages again, for a "
    "request that no longer holds them (and no page-table row)"
)


def _planned_after_release(fn, run_pages: int) -> tuple[bool, bool]:
    """(handed to cache.release, in the batch) for the probe's request, whose whole run is
    `run_pages` pages: 12 pages available before admission, 8 after it."""
    s = new_scheduler(max_prefill_tokens=64, cache="radix")
    page = s.cache.page_size
    prefix = cached(s, token_ids(4 * page, 901))  # 4 pages no request holds: evictable
    ballast(s, s.cache.num_available - 12)
    req = waiting(s, 9_000_001, prefix + token_ids(5, 902), max_tokens=run_pages * page - 4 * page - 5)
    released: list[Req] = []
    release = s.cache.release

    def watched_release(r, *args, **kwargs):
        released.append(r)
        return release(r, *args, **kwargs)

    s.cache.release = watched_release
    try:
        batch = fn(s)
    except Exception:
        return False, False
    finally:
        del s.cache.release
    in_batch = batch is not None and any(it.req is req for it in batch.items)
    return any(r is req for r in released), in_batch


def undone_then_planned(fn) -> bool:
    """Whether `fn` releases a request that is 2 pages short and plans it all the same, while it
    leaves out one that is 6 pages short: the fit read after the undo counts the 4 unlocked pages."""
    if _planned_after_release(fn, 14) != (True, True):
        return False
    return not _planned_after_release(fn, 18)[1]


def check_admitted(req: Req, fn) -> None:
    """A request in the batch must hold a page-table row; `fn`, the answer, is probed when it does not."""
    if req.table_idx >= 0:
        return
    what = f"request {req.uid} is in the batch but was never admitted (it has no page-table row)"
    if fn is None or not undone_then_planned(fn):
        raise AssertionError(f"{what}: admit it first")
    raise Mistake(
        f"{what}: your code undid its admission and still put it in the batch. A probe shows it: 12 pages "
        "available, 4 of them a cached prefix no request holds, and a request whose prompt starts with it. "
        "After cache.admit locks the prefix, 8 are available: a run of 14 pages (10 more, 2 short) was released "
        "and then planned all the same, one of 18 pages (6 short) left out. The fit was read again after the "
        "undo, when the 4 prefix pages it unlocked count as available once more",
        REREAD_HINT,
    )
