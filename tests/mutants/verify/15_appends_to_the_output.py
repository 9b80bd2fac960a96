"""Appends the new tokens to req.output_ids while it checks them. The scheduler appends the tokens
the step returns itself, one by one with _add_token: a function that also changes what it was given
is no longer a step that can be called, compared or replayed on the same input."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the inputs are left as they were"}
MUST_SAY = "changed req.output_ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "leave req.output_ids as it is"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        req.output_ids.append(token)
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(
            s in req.decode(req.output_ids[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
        ):
            reason = "stop"
        elif len(req.output_ids) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
