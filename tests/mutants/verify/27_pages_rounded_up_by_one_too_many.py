"""Rounds the pages the request still needs up as `total // page_size + 1`, which is one page too
many whenever `total` (positions 0..total-1, the newest token's included) is a multiple of the page
size: the first page that holds only rejected drafts is kept, though no position the request still
needs lies in it. Differs e.g. with a prompt of 10, output [11, 12], pages of 4, row [7, 3, 9, 4, 8]
(positions 0..19), drafts [13, 14, 15, 16, 17], targets [13, 14, 15, 99, 17, 18]: tokens 13, 14, 15, 99,
total 16: the reference frees [8] (4 pages kept), this answer frees nothing (5 kept)."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the first mismatch ends the run", "pages holding only rejected drafts go back"}
MUST_SAY = "one page too many was kept"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never total // page_size + 1"


def verify_step(req, drafts, targets):
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens = []
    reason = None
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
    # 3. roll back: valid K/V for every token but the newest; pages for positions 0..total-1
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(total // req.page_size + 1, req.prefix_len // req.page_size)  # rounded up
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
