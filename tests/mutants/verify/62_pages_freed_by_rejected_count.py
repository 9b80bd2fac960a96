"""Gives back as many pages as the rejected drafts fill, ceil((k - accepted) / page_size) from the end of the
row, instead of working out which pages still hold a position the request needs. The rejected positions are not
a whole number of pages at the row's end: when a few rejected drafts spill onto the page that also holds the
newest token, that page goes back while it is still needed (and a cut run, or spare reserved slots, are not counted at all)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"the first mismatch ends the run"}
MUST_SAY = "A page still needed was given back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pages were counted from the number of rejected drafts"


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
    rejected = len(drafts) - n  # positions of drafts the model did not agree with
    drop = -(-rejected // req.page_size)  # the pages they fill
    keep = max(len(req.pages) - drop, req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
