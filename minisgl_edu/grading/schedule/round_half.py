"""Exercise 5's admission: a request's pages rounded up with round(), which rounds halves to even.

`round(final / page_size + 0.5)` reads like a ceiling and is one for every run whose last page is
partly empty. For a run of whole pages, though, final / page_size + 0.5 ends in exactly .5, and
Python's round() takes such a half to the even number: a run of 3 whole pages counts as 4, one of 4
whole pages as 4. The exact-fit cases (`edges._two_new_exact_fit`, `edges.case_shared_prefix_tight`)
use runs of an odd number of whole pages, so that answer is refused there like one that compares
with `<` or counts `final // page_size + 1` (page_rounding.py). The probe runs the answer alone on
small pools that the run fills exactly: only this rounding refuses 3 whole pages and admits 4, and
admits 3 pages whose last one is not full. Called through `page_rounding.refuse_full_last_page`.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import waiting
from minisgl_edu.grading.schedule.checks import admits
from minisgl_edu.grading.schedule.page_sizes import paged

ROUNDED_HALF_TO_EVEN = (
    "round a request's pages up with pages_for(len(req.input_ids) + req.max_new_tokens, page_size), that is "
    "(final + page_size - 1) // page_size: round(final / page_size + 0.5) is not a ceiling, because Python's "
    "round() takes a half to the even number, so a run of an odd number of whole pages gets one page too many"
)


def _alone(fn, pages: int, final: int) -> bool:
    """Whether `fn` admits a run of `final` tokens (a 4-token prompt) alone on a pool of `pages` pages of 4."""
    s = paged(4, pages)
    return admits(fn, s, waiting(s, 0, 4, max_tokens=final - 4))


def rounds_halves_to_even(fn) -> bool:
    """Whether `fn` refuses runs that fill an odd number of whole pages (12 tokens on a pool of 3 pages,
    20 on 5) but admits ones that fill an even number (16 on 4, 24 on 6) and a run of 3 pages whose last
    page is not full (11 tokens on 3). A strict comparison refuses them all; `final // page_size + 1`
    refuses every run of whole pages. A probe that raises counts as "not this mistake"."""
    try:
        odd = not _alone(fn, 3, 12) and not _alone(fn, 5, 20)
        even = _alone(fn, 4, 16) and _alone(fn, 6, 24)
        return odd and even and _alone(fn, 3, 11)
    except Exception:
        return False


def refuse_odd_whole_pages(fn, req, why: str) -> None:
    """In an exact-fit case: `req` was refused, and `fn` rounds a run of an odd number of whole pages up one."""
    if req.table_idx < 0 and rounds_halves_to_even(fn):
        raise Mistake(
            f"request {req.uid} was not admitted, but {why}. Alone on a pool of pages of 4 that its run fills "
            "exactly, your function refuses a run of 12 tokens (3 whole pages) and one of 20 (5), but admits one "
            "of 16 (4 pages) and one of 24 (6), and one of 11 tokens on 3 pages: it counts one page too many when "
            "a run is an odd number of whole pages, as round(final / page_size + 0.5) does",
            ROUNDED_HALF_TO_EVEN,
        )
