"""Puts the min_tokens gate in front of the package's own check_finish. The gate is one line; the
rest of the answer is the package's, so it is not the student's own code."""

from minisgl_edu.scheduler.finish import check_finish

MUST_FAIL = {"stretch: EOS waits for min_tokens", "stretch: stop strings wait too"}
MUST_SAY = "not your own code"


def check_finish_min_tokens(req, eos_ids, decode, min_tokens):
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    return check_finish(req, eos_ids, decode)


CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "write the answer without calling, subclassing or keeping"
