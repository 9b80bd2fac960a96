"""Does the cache manager's work by hand (and lets release() do it while the batch is in flight):
inserts the computed full pages, frees the request's copies of pages the tree already had, from
the end of the prefix it was admitted with (`req.prefix_len // page_size`) up to insert()'s count,
then the tail, unlocks the prefix and frees the row. It misses the other pages the cache already
holds: the first of n answers to one prompt hands its prompt's full pages to the prefix cache
after its prefill (`req.shared_len` > `req.prefix_len`), so the row's pages before `shared_len`
are the cache's too, not copies. Differs for the first of n=2 answers aborted while both decode:
its prompt pages past its prefix hit go onto the free list while the cache still holds them (and
the second answer reads them); the reference leaves them to the cache."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: the first of n answers to one prompt"}
MUST_SAY = "first of n=2 answers to one prompt"
CAUGHT_BY = {"hand"}
HINT_SAYS = "max(req.prefix_len, req.shared_len) // page_size"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    """abort_request, with the request's computed full pages handed to the prefix cache."""
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if scheduler.has_in_flight and req in scheduler.in_flight_batch.reqs:
        cache.release(req, cache_it=True)  # the GPU still writes its pages: release() waits
    elif req.table_idx >= 0:
        ps = cache.page_size
        pages = cache.page_table.pages[req.table_idx]
        own_from = req.prefix_len // ps  # the prefix hit is the cache's
        full = req.cached_len // ps
        existing = cache.prefix_cache.insert(req.all_ids[: full * ps], pages[:full])
        cache.allocator.free(pages[own_from:existing])  # our copies of what the tree had
        cache.allocator.free(pages[full:])  # the partial page and pages reserved for later
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
