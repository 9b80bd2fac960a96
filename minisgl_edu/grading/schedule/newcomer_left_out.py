"""Exercise 5's probe for a sum of pages that leaves out the request being admitted, called by
base.case_does_not_fit when a request whose run does not fit was admitted.

try_admit sums the remaining need of every admitted request, the newcomer `req` included:
`for r in admitted + [req]`. An answer that sums over `admitted` alone ("the others must still fit
once it is in") compares the others' need with the pages available and never counts the newcomer's
own run: whenever the others fit, the newcomer is admitted, however much it takes.

The probe confirms it on two scenes of need_clamped.py: a lone request, nothing running, whose own
run needs 56 pages with 4 available, is admitted (its own pages are not counted); a newcomer that
needs 1 page beside a running request that may still take 50 of the 4 available is refused (the
running request's pages are counted). An answer that never refuses, or counts nobody's run, admits
both and is left to need_clamped.py.
"""

from __future__ import annotations

from minisgl_edu.grading.schedule.checks import admits
from minisgl_edu.grading.schedule.need_clamped import admits_lone_request, running_overflow

NEWCOMER_LEFT_OUT = (
    "sum over admitted + [req]: the request being admitted counts too, its whole run "
    "max(pages_for(len(req.input_ids) + req.max_new_tokens, page_size) - cache.held_pages(req), 0) beside the "
    "others'. Your sum covers only the requests admitted before it, so a newcomer is admitted whenever the "
    "others fit, however many pages its own run takes"
)


def leaves_out_the_newcomer(fn) -> bool:
    """Whether `fn` admits the lone request whose own run does not fit, yet refuses a 1-page newcomer
    beside a running request that alone needs more than is available."""
    if not admits_lone_request(fn):
        return False
    s, req = running_overflow()
    return not admits(fn, s, req)


def newcomer_message() -> str:
    """What the probe showed, for the failure message of an answer that `leaves_out_the_newcomer`."""
    return (
        ". A probe shows your sum leaves out the request being admitted: a lone request, nothing running, whose "
        "run needs 56 pages with 4 available, was admitted, while a newcomer needing 1 page beside a running "
        "request that may still take 50 of the 4 available was refused: the running request's pages are "
        "counted, the newcomer's own are not"
    )
