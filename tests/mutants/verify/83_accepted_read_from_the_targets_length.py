"""Reads the number of accepted drafts off the length of the targets (`n = len(targets) - 1`, the last
target being the model's own token), the sampling note ("its targets stop at the first draft it
rejects") taken for the greedy rule. Greedy targets always hold k + 1 tokens whatever the model agrees
with, so every draft is kept, even those after a mismatch: acceptance compares each draft with its
target and stops at the first that differs."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"the first mismatch ends the run"}
MUST_SAY = "accepted: yours 4, expected 1"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "stop comparing at the first draft that differs"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = len(targets) - 1  # the targets end at the first rejected draft, with the model's token
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
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
