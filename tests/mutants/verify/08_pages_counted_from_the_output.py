"""Counts positions from the first output token, forgetting that the page-table row starts with the
prompt: it gives back pages of the prompt, whose K/V every later step reads, and pages of the
prefix cache, which other requests share."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"never a page of the prefix cache", "in the real engine, drafts rejected at every place"}
MUST_SAY = "prefix cache"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pages were counted from the start of the output"


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
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-(len(req.output_ids) + len(tokens)) // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
