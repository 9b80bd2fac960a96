"""Takes "the newest sampled token is not one of them" as the whole rule: sets
req.cached_len = len(req.all_ids) - 1 (every token but the newest is computed) before
release(req, cache_it=True). True for a request that is decoding between two steps, wrong for one
part-way through a chunked prefill (or admitted for its first chunk and aborted before run_batch):
its all_ids is the prompt, whose later chunks have no K/V yet ("nor the part of a prompt whose
chunks have not run"), and their pages go into the prefix cache filed under tokens they do not
hold (insert takes only the pages the row has, so it shows where the row holds a page past the
computed tokens). Differs e.g. for a 40-token prompt (pages of 4) aborted after a first chunk of 10
tokens: the row holds 3 pages; the reference caches 2 (tokens 0-7), this answer 3 (the third filed
under tokens 8-11, of which 10 and 11 have no K/V); likewise a first chunk reserved by schedule()
and aborted before run_batch()."""

from __future__ import annotations

from minisgl_edu.core import ReqStatus
from minisgl_edu.message import DetokenizeMsg

MUST_FAIL = {"stretch: mid chunked prefill", "stretch: between schedule() and run_batch()"}
MUST_SAY = "pages for prompt tokens that were never computed"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count req.cached_len, not the prompt's length or the pages the row holds"


def abort_request_to_cache(scheduler, uid: int) -> bool:
    req = scheduler.reqs.pop(uid, None)
    if req is None:
        return False
    if req in scheduler.waiting:
        scheduler.waiting.remove(req)
    if req in scheduler.running:
        scheduler.running.remove(req)
    if req.table_idx >= 0:
        req.cached_len = len(req.all_ids) - 1  # every token but the newest sampled one has its K/V
    scheduler.cache.release(req, cache_it=True)
    req.status = ReqStatus.FINISHED
    req.finish_reason = "abort"
    scheduler.io.send([DetokenizeMsg(uid, -1, True, "abort", list(req.sampling_params.stop))])
    return True
