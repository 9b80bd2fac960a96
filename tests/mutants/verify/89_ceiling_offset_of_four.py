"""Rounds the pages up with the (a + b - 1) // b idiom but writes b - 1 as the notebook example's
number, (total + 3) // req.page_size: right for pages of 4 only. With pages of 8 or 16 it rounds down
and gives back the page of the newest token; with pages of 1 or 2 it keeps pages of rejected drafts.
The offset is req.page_size - 1 (or -(-total // req.page_size))."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the newest token's page stays"}
MUST_SAY = "rounded up with a fixed offset"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an offset of 3 rounds up only for pages of 4 positions"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens, reason = [], None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max((total + 3) // req.page_size, req.prefix_len // req.page_size)  # round up to whole pages
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
