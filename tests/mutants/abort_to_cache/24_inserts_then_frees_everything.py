"""Inserts the computed full pages into the prefix cache itself
(prefix_cache.insert(all_ids[:cached_len], row[:full])), then calls release(req, cache_it=False)
to give the rest back. But release(cache_it=False) frees every own page of the row, the ones the
tree just adopted among them: those pages are in the prefix cache and on the free list at once, so
the next request handed one overwrites K/V the cache still shares. Let release(req, cache_it=True)
do both: it inserts the full pages and frees only what the cache did not keep."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only", "stretch: mid chunked prefill"}
MUST_SAY = "in the prefix cache and on the free list"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "insert once, and never free it after"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    cache = scheduler.cache
    if req.table_idx >= 0:
        row = cache.page_table.pages[req.table_idx]
        full = req.cached_len // cache.page_size
        cache.prefix_cache.insert(req.all_ids[: req.cached_len], list(row[:full]))
    cache.release(req, cache_it=False)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
