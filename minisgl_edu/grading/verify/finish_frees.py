"""Exercise 8: every page of the request's own given back on a step that finishes it.

"A finished request needs none of its own pages" reads the finish as the end of the row: free_pages
becomes every page after the prefix cache's (`req.pages[prefix_len // page_size:]`), or the whole row.
But the scheduler applies the step's result first and then inserts the request's first kv_len tokens
into the prefix cache from its row, so the pages of valid K/V stay on the row, finished or not: only
the pages past the request's new length go back. On the failing step this shows as "a page still
needed was given back", which a page count one too low shows as well, so pages.py names it only when
the answer, on small steps of its own (a prompt of 10 tokens, the first 4 a cached prefix, a row of 5
pages), gives back the right pages on a step that no finish cuts, and every page after the prefix
cache's (or more) on the steps an EOS and max_new_tokens cut.
"""

from __future__ import annotations

from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import verify_step as package_step

FINISH_FREED = (
    "pages that hold valid K/V were given back because the step finished the request, but a finished request "
    "keeps its valid pages too (the scheduler caches them): after the step it inserts the request's first kv_len "
    "tokens into the prefix cache from its row. Give back only req.pages[keep:], keep = pages_for(total, "
    "page_size), the pages past the new length (rejected drafts, tokens after the finish), finished or not"
)


def _steps():
    """Three steps of one request (prompt 10, its first 4 tokens a cached prefix, output [' one'], a row of
    5 pages for 6 drafts): the first draft rejected (no finish), an EOS accepted as draft 1, and
    max_new_tokens 3 reached at draft 1."""
    two, three, four, five, six, seven = _w(" two", " three", " four", " five", " six", " seven")
    drafts = [two, three, four, five, six, seven]
    free = (_req(_w(" one"), 6, prefix_len=4), drafts, [seven, three, four, five, six, seven, two])
    eos = (_req(_w(" one"), 6, prefix_len=4), [two, 2] + drafts[2:], [two, 2, seven, four, five, six, two])
    length = (_req(_w(" one"), 6, prefix_len=4, max_new=3), drafts, [two, three, seven] + [two] * 4)
    return free, eos, length


def _kept(fn, req, drafts, targets):
    """(pages the answer kept, pages the package kept) on one step, or None when the answer raised or
    gave back other pages than the end of its row."""
    try:
        got = _call(fn, req, drafts, targets).free_pages
    except Exception:
        return None
    if got != req.pages[len(req.pages) - len(got) :]:
        return None
    want = package_step(_copy(req), list(drafts), list(targets)).free_pages
    return len(req.pages) - len(got), len(req.pages) - len(want)


def frees_its_pages_on_a_finish(fn) -> bool:
    """On the step no finish cuts the answer keeps the right pages; on both finishing steps it keeps none
    of the request's own, at most the prefix cache's page, where the package keeps more."""
    free, *finishes = _steps()
    right = _kept(fn, *free)
    if right is None or right[0] != right[1]:
        return False
    cached = free[0].prefix_len // free[0].page_size
    return all(k is not None and k[0] <= cached < k[1] for k in (_kept(fn, *f) for f in finishes))
