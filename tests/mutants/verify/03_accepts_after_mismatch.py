"""Keeps every draft that equals its target, also after the first one that does not. Once a draft is
rejected, the positions after it were computed after a token the request never gets: their targets
say nothing about the drafts there, and the run must end at the first mismatch."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the first mismatch ends the run", "pages holding only rejected drafts go back"}
MUST_SAY = "after the first mismatch"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "drafts after the first mismatch were accepted"


def verify_step(req, drafts, targets):
    agreed = [d for d, t in zip(drafts, targets) if d == t]
    n = len(agreed)
    run = agreed + [targets[n]]
    tokens, reason = [], None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(
            s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
        ):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
