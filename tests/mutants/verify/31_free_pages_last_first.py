"""Lists free_pages from the end of the row backwards ("give the pages back last first, as a stack
unwinds"), instead of in the row's order. The contract: `free_pages` are the pages at the end of
req.pages, "in the row's order"; the scheduler hands them to CacheManager.trim, which refuses a list
that is not the end of the row as it stands. Only a step that gives back two or more pages differs:
e.g. prompt 10, output [11, 12], pages of 4, row [7, 3, 9, 4, 8, 6] (positions 0-23), drafts
[13, ..., 20] and targets [99, ...] (the first draft rejected): tokens [99], 13 positions needed,
4 pages kept; the reference frees [8, 6], this answer [6, 8]."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"pages holding only rejected drafts go back", "a finish: kv_len and pages of the cut run"}
MUST_SAY = "Give them in the row's order"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "free_pages are the end of req.pages, in the row's order"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
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
    # give the pages back from the end of the row, the last first
    return VerifyResult(
        accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:][::-1]
    )
