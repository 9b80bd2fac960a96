"""Inserts the computed full pages into the prefix cache, then hands the rest to the package's own
abort_request: the answer is the package's, not the student's (and the package then frees the
pages it just cached)."""

from minisgl_edu.scheduler.abort import abort_request

MUST_FAIL = {"stretch: decoding, full pages only"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"


def abort_request_to_cache(scheduler, uid):
    req = scheduler.reqs.get(uid)
    if req is not None and req.table_idx >= 0:
        ps = scheduler.cache.page_size
        full = req.cached_len // ps
        scheduler.cache.prefix_cache.insert(
            req.all_ids[: full * ps], scheduler.cache.page_table.pages[req.table_idx][:full]
        )
    return abort_request(scheduler, uid)
