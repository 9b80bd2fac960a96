"""Counts the pages to keep as total // page_size, rounding down: the last page, which holds the
newest positions (valid K/V of accepted drafts among them), goes back to the free list, and another
request may overwrite it while this one still reads it."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"pages holding only rejected drafts go back", "in the real engine, drafts rejected at every place"}
MUST_SAY = "still holds valid positions"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "round up: pages_for(total, page_size)"


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
    keep = total // req.page_size
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
