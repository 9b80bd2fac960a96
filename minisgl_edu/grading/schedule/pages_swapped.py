"""Exercise 5's probe for pages_for called with its arguments swapped, called by base.case_does_not_fit
when a request whose run does not fit was admitted.

The helper's signature is pages_for(num_tokens, page_size). Called as pages_for(page_size, final), it
computes ceil(page_size / final): 1 page for any run of page_size tokens or more, so try_admit counts
about one page a request and admits runs that do not fit. Unlike a count that never refuses (a min
clamp, no check at all; need_clamped.py), it still says no when nothing is available, and it counts
more pages the shorter a run is. The probe confirms both on two lone requests, nothing running, 1 page
available: a 24-token prompt with 200 tokens to generate (56 pages) is admitted, and a 1-token prompt
with 1 token to generate (a 2-token run: 1 page) is refused. Only a count that grows as the run shrinks
does both.
"""

from __future__ import annotations

from minisgl_edu.grading.fixtures import ballast, waiting
from minisgl_edu.grading.harness import new_scheduler
from minisgl_edu.grading.schedule.checks import admits

PAGES_FOR_SWAPPED = (
    "pages_for takes the number of tokens first and the page size second: pages_for(len(r.input_ids) + "
    "r.max_new_tokens, cache.page_size). Yours passes cache.page_size first, which computes ceil(page_size / "
    "tokens): 1 page for any run of a page or more, so your sum counts about one page a request"
)


def _lone(prompt: int, max_tokens: int):
    """A scene of its own: a lone request, nothing running, 1 page available."""
    s = new_scheduler(max_prefill_tokens=4, cache="radix")  # a first chunk of one page at most
    ballast(s, s.cache.num_available - 1)
    req = waiting(s, 9_000_006, prompt, max_tokens=max_tokens)
    return s, req


def swaps_pages_for(fn) -> bool:
    """Whether `fn` admits a 56-page run with 1 page available, yet refuses a 2-token run (1 page)."""
    s, req = _lone(24, 200)
    if not admits(fn, s, req):
        return False
    s, req = _lone(1, 1)
    return not admits(fn, s, req)


def swapped_message() -> str:
    """What the probe showed, for the failure message of an answer that `swaps_pages_for`."""
    return (
        ". A probe shows your count of pages is upside down: with 1 page available and nothing running, a lone "
        "request whose run (24 + 200 tokens) takes 56 pages was admitted, and one whose run (1 + 1 tokens) takes "
        "1 page was refused: a short run counts more pages than a long one"
    )
