"""Frees the request's own pages by hand, from the end of the prefix it was admitted with,
`req.prefix_len // page_size`, unlocks the prefix and frees the row (and lets release() do the work
while a batch is in flight). It misses the contract's other case: the first of n answers
to one prompt hands its prompt's full pages to the prefix cache after its prefill
(`req.shared_len` > `req.prefix_len`), so the row's pages before `shared_len` are the cache's.
Differs for a request with n=2 (shares_prompt) aborted while decoding: its prompt pages, which the
cache holds and its sibling reads, go on the free list (reference: they stay in the cache)."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"abort while others hold its cached prefix"}
MUST_SAY = "first of n=2 answers"
CAUGHT_BY = {"hand"}
HINT_SAYS = "max(req.prefix_len, req.shared_len) // page_size"


def abort_request(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if scheduler.has_in_flight:  # on the overlap loop: release() waits for the batch
        cache.release(req, cache_it=False)
    elif req.table_idx >= 0:
        row = cache.page_table.pages[req.table_idx]
        own_from = req.prefix_len // cache.page_size  # the pages after its prefix hit are its own
        cache.allocator.free(row[own_from:])
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
