"""Exercise 5's probe for an admission count that never refuses for pages, called by
base.case_does_not_fit when a request whose run does not fit was admitted.

try_admit sums each admitted request's remaining need, pages_for(len(r.input_ids) + r.max_new_tokens)
- cache.held_pages(r), clamped at zero so that a request holding more than it may still take adds
nothing. Clamped with `min(need, 0)` instead of `max(need, 0)`, every term is 0 or less: the sum never
exceeds cache.num_available, and every request is admitted while a page-table row is free.

Many slips admit the request of case_does_not_fit (forgetting the running request's need, or the
generated tokens), so the probe asks a scene of its own where any count of the request's own pages
refuses: a lone request, nothing running, 4 pages available, a 24-token prompt (6 pages, more than
the 4 on its own) and 200 tokens to generate (56 pages in all), with a budget of 8 tokens so that its
first chunk fits in the 4 pages. Only an answer whose count of pages never says no admits it.

A third admits it too: a sum over the requests already admitted that leaves the newcomer out (its
own run is never counted, and nothing else runs). So before the clamp is named, a second scene of its
own, `running_overflow`, asks the other way round: a running request may still take more pages than
are available and the newcomer needs one page. A min clamp (every term 0 or less) admits it; a sum
that leaves only the newcomer out refuses, and newcomer_left_out.py names that mistake.

pages_for called with its arguments swapped admits both too (about one page a run), but a count, however
small, still refuses when no page is available: so the probe also asks a lone request with none available,
which only a count that never refuses admits (pages_swapped.py names the swap).

Two mistakes admit both alike: the clamp written with min, and no count of pages at all (a student who
trusts cache.admit or cache.reserve to fail when pages run short). Their admissions cannot tell them
apart, so the probe also watches what the answer reads of the cache: one that never reads
cache.num_available (nor cache.num_free) has nothing to compare its sum with, and gets the hint for
the missing check; one that reads it gets the hint for the clamp.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import ballast, decoding, waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.grading.schedule.checks import admits

NEED_CLAMPED = (
    "clamp each request's remaining need at zero from below, max(need, 0): pages_for(len(r.input_ids) + "
    "r.max_new_tokens, page_size) - cache.held_pages(r) never counts less than nothing. min(need, 0) keeps only "
    "the negative part, so every term is 0 or less, the sum never exceeds cache.num_available, and every request "
    "is admitted while a page-table row is free"
)

NO_PAGE_CHECK = (
    "try_admit itself must refuse a request whose run does not fit: sum, over admitted + [req], "
    "max(pages_for(len(r.input_ids) + r.max_new_tokens, page_size) - cache.held_pages(r), 0) and refuse (undo "
    "the admission) when it exceeds cache.num_available. cache.admit and cache.reserve do not refuse: they "
    "hand out the pages asked for now, not the ones a run takes later, so your try_admit never compares "
    "anything with the pages available"
)


class _CapacityReads:
    """Counts what `fn` reads of the cache's capacity during one call: the cache's class is swapped for
    a subclass whose num_available and num_free properties count their reads."""

    def __init__(self, cache):
        self.count = 0
        base = type(cache)
        watch = self

        class Watched(base):
            @property
            def num_available(self):
                watch.count += 1
                return base.num_available.fget(self)

            @property
            def num_free(self):
                watch.count += 1
                return base.num_free.fget(self)

        cache.__class__ = Watched


def _lone_request(available: int = 4):
    """A lone request, nothing running, `available` pages left: its 6-page prompt alone does not fit."""
    s = new_scheduler(max_prefill_tokens=8, cache="radix")
    ballast(s, s.cache.num_available - available)  # 4 pages: room for its first chunk only
    req = waiting(s, 9_000_003, 6 * s.cache.page_size, max_tokens=200)
    return s, req


def running_overflow():
    """A running request that may still take 50 pages, 4 pages available, and a newcomer of 3 tokens
    with 1 to generate: it needs 1 page, but the running request alone already needs more than is left."""
    s = new_scheduler(max_prefill_tokens=8, cache="radix")
    decoding(s, 9_000_004, 8, max_tokens=200)  # 208 tokens: 52 pages, 2 of them held
    ballast(s, s.cache.num_available - 4)
    req = waiting(s, 9_000_005, 3, max_tokens=1)
    return s, req


def admits_lone_request(fn) -> bool:
    """Whether `fn` admits a lone request whose prompt alone (6 pages) exceeds the 4 pages available."""
    s, req = _lone_request()
    return admits(fn, s, req)


def never_refuses_for_pages(fn) -> bool:
    """Whether `fn` admits the lone request, and the 1-page newcomer beside a running request that alone
    needs more than is available: an answer whose count of pages says no to neither. With no page
    available at all it admits the lone request too: any count of its run in pages would refuse it
    (pages_for with its arguments swapped, pages_swapped.py, counts about one page a run)."""
    if not admits_lone_request(fn):
        return False
    s, req = _lone_request(available=0)
    # with no page available, an admitted request's first chunk cannot get its pages (cache.reserve raises)
    if not admits(fn, s, req, even_if_it_fails=True):
        return False
    s, req = running_overflow()
    return admits(fn, s, req)


def which_hint(fn) -> str:
    """NO_PAGE_CHECK for an answer that reads neither cache.num_available nor cache.num_free while it
    decides, NEED_CLAMPED otherwise."""
    s, req = _lone_request()
    reads = _CapacityReads(s.cache)
    admits(fn, s, req)
    return NO_PAGE_CHECK if reads.count == 0 else NEED_CLAMPED


def probe_message() -> str:
    """What the probe showed, for the failure message of an answer that `never_refuses_for_pages`."""
    return (
        ". A probe shows your count of pages never says no: a lone request, nothing running, a 24-token prompt "
        "(6 pages) and 200 tokens to generate (56 pages in all) with only 4 pages available, was admitted too"
    )
