"""Delegates to the package's own check through a helper function. Full marks for the package,
none for the student: the graded code must be theirs."""

import minisgl_edu.scheduler.finish

MUST_FAIL = {"EOS ids finish with 'stop'", "stop string across tokens"}
MUST_SAY = "not your own code"


def _decide(req, eos_ids, decode):
    return minisgl_edu.scheduler.finish.check_finish(req, eos_ids, decode)


def check_finish(req, eos_ids, decode=None):
    return _decide(req, eos_ids, decode)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"
