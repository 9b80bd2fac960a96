"""Exercise 5's admission at page sizes other than 4: a page count that does not read the page size.

Every other scene of the exercise uses pages of 4 tokens (the grading engine's setting), so an
answer that counts a request's pages as `pages_for(tokens, 4)`, or divides by 4 itself, decides
all of them right. The page size is a setting of the engine (`page_size` is a server argument),
and the answer must read it from `scheduler.cache.page_size`. These plays give the scheduler a
cache of pages of 8 tokens, then of 2 (a small pool of its own; no model runs), and ask the same
question as the exact-fit and one-page-short margins of `case_memory_margins`, which the answer
has just decided right at pages of 4: admitted or not. A different verdict here comes from the
page size alone.
"""

from __future__ import annotations

import torch

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, waiting
from minisgl_edu.grading.schedule.checks import decide, sched
from minisgl_edu.kvcache import CacheManager, KVPool, PageTable, pages_for
from minisgl_edu.scheduler import Scheduler

# (page size, pages in the pool, request 0's max_tokens, request 1's max_tokens, whether 1 fits).
# Request 0 (9-token prompt) runs; request 1 (6-token prompt) waits. The runs end inside a page, so
# a count one or two tokens off gives the same pages; a count in pages of 4 does not.
# Pages of 8, 64 pages: request 0's run is 252 tokens (32 pages, 2 held: 30 to come), request 1's
# 252 (32 pages): 62, exactly the 62 available. Counted in pages of 4 it is 61 + 63: refused.
# Pages of 2, 128 pages: request 0's run is 128 tokens (64 pages, 5 held: 59 to come), request 1's
# 130 (65 pages): 124, one more than the 123 available. Counted in pages of 4 it is 27 + 33: admitted.
SCENES = [(8, 64, 243, 246, True), (2, 128, 119, 124, False)]

HINT = (
    "count a request's pages with the cache's page size, pages_for(tokens, scheduler.cache.page_size), "
    "never a fixed number of tokens per page: the page size is a setting of the engine (4 in the other "
    "cases, 8 or 2 here)"
)
COUNT = (
    "a request's pages are pages_for(len(req.input_ids) + req.max_new_tokens, scheduler.cache.page_size), "
    "less the pages it holds (cache.held_pages); a request fits when that sum over the admitted requests "
    "and the new one is <= cache.num_available"
)


def paged(page_size: int, num_pages: int) -> Scheduler:
    """A scheduler whose cache has `num_pages` pages of `page_size` tokens, a pool of its own."""
    s = sched()
    pool = KVPool(1, num_pages, page_size, 1, 1, torch.float32, "cpu")
    rows = s.cache.page_table.max_reqs
    table = PageTable(rows, pages_for(num_pages * page_size, page_size), "cpu", fill=pool.dummy_page)
    s.cache = CacheManager(pool, table, "naive")
    return s


def _play(fn, page_size: int, num_pages: int, max0: int, max1: int, fits: bool) -> str | None:
    """One scene; what went wrong in it, or None when the answer decided right."""
    s = paged(page_size, num_pages)
    running = decoding(s, 0, 9, max_tokens=max0)
    req = waiting(s, 1, 6, max_tokens=max1)
    held, available = s.cache.held_pages(running), s.cache.num_available
    run0, run1 = 9 + max0, 6 + max1
    need0, need1 = pages_for(run0, page_size), pages_for(run1, page_size)
    assert (need0 - held + need1 <= available) == fits, "setup: the pages changed"
    decide(fn, s)
    if (req.table_idx >= 0) == fits:
        return None
    return (
        f"with pages of {page_size} tokens (scheduler.cache.page_size = {page_size}, {num_pages} pages), "
        f"request 0 runs ({run0} tokens, {need0} pages, {held} held: {need0 - held} to come) and request 1 "
        f"waits ({run1} tokens, {need1} pages): {need0 - held} + {need1} = {need0 - held + need1} pages "
        f"against {available} available, so {'admit it' if fits else 'leave it waiting'}; your answer "
        f"{'did not admit it' if fits else 'admitted it'}"
    )


def other_page_sizes(fn) -> None:
    """The answer's admission at pages of 8 (an exact fit) and of 2 tokens (one page short). Wrong at
    both, a count too big at 8 and too small at 2, is a count that does not scale with the page size."""
    wrong = [w for w in (_play(fn, *scene) for scene in SCENES) if w]
    if len(wrong) == len(SCENES):
        raise Mistake(
            "; and ".join(wrong) + ". The same questions with pages of 4 (the memory margins above) you "
            "answered right: your count of pages does not follow the page size",
            HINT,
        )
    if wrong:
        raise Mistake(wrong[0], COUNT)
