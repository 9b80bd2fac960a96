"""Hands the work to the package's own `abort_request`. It gets every case right, and it is not
an answer: the graded object must be the student's own code."""

from minisgl_edu.scheduler import abort as package_abort

MUST_FAIL = {"abort while waiting", "other requests unharmed"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"


def abort_request(scheduler, uid):
    return package_abort.abort_request(scheduler, uid)
