"""When the step finishes the request, keeps only the pages of the valid K/V (positions 0 to kv_len -
1) and gives back the page of the newest token too ("a finished request has no next step: the
newest token's K/V is never written, so its page holds nothing needed"). The contract: free_pages
are the pages that hold no position the request still needs, "the newest token's included",
whether or not the request finished: its finished output still has that token, and the scheduler's
release() (and a prefix cache that takes cached_len tokens) counts the row from it. Differs when a
finishing step's newest token opens a page: e.g. prompt 10, output [11, 12] (the newest at
position 11), pages of 4, row [7, 3, 9, 4, 8] (positions 0-19), eos_ids {0, 2}, drafts [13, 14,
15, 16, 17], targets [2, 14, 15, 16, 17, 18] (the first draft rejected, the model says EOS):
tokens [2], "stop", 13 tokens, the newest at position 12, the first slot of page 3. The reference
keeps 4 pages and frees [8]; this answer keeps 3 and frees [4, 8]."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it"}
MUST_SAY = "A page still needed was given back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the newest token's page and the prefix cache's pages included"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own. A stop string of
    # b bytes in UTF-8 spans at most b tokens (a token stands for at least one byte), plus a margin
    # for the token its text begins in and for special tokens, which decode to nothing.
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens: list[int] = []
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
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    if reason is not None:  # finished: no next step writes the newest token's K/V
        keep = max(-(-(total - 1) // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
    ### END SOLUTION
