"""Inserts the computed full pages itself, then calls release(req, cache_it=True), which inserts
them again: the second insert finds them in the tree and frees them as duplicates, so the same
pages are in the prefix cache and on the free list."""

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: decoding, full pages only"}
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
        full = req.cached_len // cache.page_size
        cache.prefix_cache.insert(req.all_ids[: full * cache.page_size], cache.page_table.pages[req.table_idx][:full])
    cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
