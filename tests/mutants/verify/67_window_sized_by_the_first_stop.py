"""Sizes the stop-string decode window by the first stop string of the list (its UTF-8 bytes + 4) instead
of the longest. A longer stop string later in the list spans more tokens than the window, so a token
that completes it is not seen to finish the request and the run goes on past it."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string of multi-byte characters", "generated: 250 verify steps against the package's"}
MUST_SAY = "a stop string shorter in bytes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the longest stop string of the list sizes the tail"


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
    window = (len(req.stop[0].encode("utf-8")) if req.stop else 0) + 4
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
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
