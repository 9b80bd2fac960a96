"""Does the cache manager's work by hand (and lets release() do it while the batch is in flight),
but inserts only the request's own part: the tokens after its cached prefix,
`all_ids[own_from * ps : full * ps]`, with its own pages `row[own_from:full]`. insert() files the
sequence it is given from the root, as a prompt's start, so those pages end up under the wrong
tokens: a request that starts like the aborted one never finds them, and one whose prompt starts
with the tokens after the prefix would read K/V computed at other positions, after other tokens.
The contract: the cache gets the request's computed full pages "filed under their tokens", the
first `req.cached_len` of `req.all_ids` from the first token. Differs for any abort of a request
admitted on a prefix hit that computed a full page past it: a new request with the same start
reuses only the prefix (reference: the aborted request's computed pages too)."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: after a cached prefix"}
MUST_SAY = "filed from the root as if it were a prompt's start"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "insert the whole computed sequence from its first token"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    if scheduler.has_in_flight and req in scheduler.in_flight_batch.reqs:
        cache.release(req, cache_it=True)  # the batch still writes its pages: let release() wait
    elif req.table_idx >= 0:
        ps = cache.page_size
        row = cache.page_table.pages[req.table_idx]
        own_from = max(req.prefix_len, req.shared_len) // ps  # the pages before are the cache's
        full = req.cached_len // ps
        # cache what this request computed itself: the tokens after its prefix, on its own pages
        existing = cache.prefix_cache.insert(req.all_ids[own_from * ps : full * ps], row[own_from:full])
        cache.allocator.free(row[own_from : own_from + existing])
        cache.allocator.free(row[full:])
        cache.prefix_cache.unlock(req.cache_handle)
        req.cache_handle = None
        del cache.uid_of_row[req.table_idx]
        cache.page_table.free_row(req.table_idx)
        req.table_idx = -1
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
