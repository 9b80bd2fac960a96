"""Counts the pages to keep as the pages of the request's positions PLUS the prefix cache's pages
(`-(-total // page_size) + prefix_len // page_size`), reading the prefix pages as extra pages that must
stay on top of the request's own. The prefix pages are the first pages of the same row, already inside
the pages of positions 0..total-1: with a cached prefix it keeps pages of rejected drafts that should go
back."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"never a page of the prefix cache"}
MUST_SAY = "the prefix cache's pages were added on top of the pages kept"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not their sum"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own
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
    keep = -(-total // req.page_size) + req.prefix_len // req.page_size  # own pages + the cache's
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
