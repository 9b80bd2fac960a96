"""Keeps only the pages of the valid K/V (positions 0..kv_len-1) and gives back the page where the
newest token's K/V is written in the next step: when that position opens a page, the scheduler has
to take a page from the free list again at once."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the newest token's page stays"}
MUST_SAY = "where the newest token's K/V goes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "is where the newest token's K/V goes next step"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
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
    kv_len = req.prompt_len + len(req.output_ids) + len(tokens) - 1
    keep = -(-kv_len // req.page_size)
    return VerifyResult(n, tokens, reason, kv_len, req.pages[keep:])
