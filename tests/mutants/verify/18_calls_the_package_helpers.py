"""Imports the package's acceptance rule and finish check (accept_greedy, check_finish) and writes
only the page arithmetic around them. The graded code must be the student's own."""

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.verify import accept_greedy
from minisgl_edu.scheduler.finish import check_finish
from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too", "the first mismatch ends the run"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"hand", "generated"}


def verify_step(req, drafts, targets):
    run = accept_greedy(drafts, targets)
    tokens, reason = [], None
    for token in run:
        tokens.append(token)
        probe = Req(0, [], SamplingParams(ignore_eos=req.ignore_eos, stop=req.stop), output_ids=req.output_ids + tokens)
        probe.max_new_tokens = req.max_new_tokens
        reason = check_finish(probe, req.eos_ids, req.decode)
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(len(run) - 1, tokens, reason, total - 1, req.pages[keep:])


HINT_SAYS = "write the answer without calling, subclassing or keeping"
