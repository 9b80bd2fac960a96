"""Tests the length limit with > instead of >=: the output must go past max_new_tokens before
"length" fires. The max_new_tokens-th new token is the last one allowed, so a run that reaches the
limit exactly keeps going, and the request gets one token more than max_tokens allows (with
ignore_eos, output 2 of max 4 and the drafts [2, 0] accepted, the model's token comes too)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token"}
MUST_SAY = "one token past max_new_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = ">= max_new_tokens (not >)"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
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
        elif len(output) > req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
