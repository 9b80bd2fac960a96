"""Does the cache manager's work by hand (and lets release() do it while the batch is in flight):
inserts the computed full pages, then frees `row[:existing]`, the pages for which the tree already
had pages ("insert returns k: pages[:k] stay the caller's, they are duplicates"), then the tail,
unlocks the prefix and frees the row. It forgets that the first pages of the row, the prefix the
request was admitted with (req.prefix_len tokens, or req.shared_len), ARE the tree's own pages,
not copies: they go onto the free list while the prefix cache still holds them and hands them out
as a prefix hit. The contract: "pages that the cache already holds for the same tokens (the
request's own prefix hit, ...) stay the cache's; the request's copies go to the free list."
Differs for any abort of a request admitted on a prefix hit: the reference's free count goes up by
the request's own pages, this answer's also by its prefix pages (and cache.check() fails: a page
both free and cached)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: between schedule() and run_batch()"}
MUST_SAY = "of the request's prefix hit"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the pages of the prefix the request was admitted with"


def abort_request(scheduler, uid: int) -> bool:
    """Remove `uid` from the scheduler and free its memory. False if it is not there."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    scheduler.cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    # A finished request's path fits an aborted one: release() inserts all_ids[:cached_len] in
    # whole pages, frees the duplicates of pages the cache already had and the partial tail,
    # unlocks the prefix once, caches nothing under the naive cache, and waits for a batch in
    # flight. cached_len never counts the newest sampled token, nor a chunk or page not yet run.
    cache = scheduler.cache
    if scheduler.has_in_flight and req in scheduler.in_flight_batch.reqs:
        cache.release(req, cache_it=True)  # the batch still writes its pages: let release() wait
    elif req.table_idx >= 0:
        ps = cache.page_size
        row = cache.page_table.pages[req.table_idx]
        full = req.cached_len // ps  # whole computed pages
        existing = cache.prefix_cache.insert(req.all_ids[: full * ps], row[:full])
        cache.allocator.free(row[:existing])  # the tree had these already: ours are duplicates
        cache.allocator.free(row[full:])  # the partial page and pages reserved for later
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
    ### END SOLUTION
