"""Tests the length limit against max_new_tokens - 1: "length" fires at the token before the last
one allowed, so a request that may still take one token stops without it. The max_new_tokens-th new
token is the last allowed and comes with "length" (with ignore_eos, output 2 of max 4 and the drafts
[2, 0] accepted, both drafts are kept: the second is the 4th token). The finishing token itself is
kept, so the run is not one that drops the token that finishes it: the cut simply comes one early."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token", "'stop' beats 'length'"}
MUST_SAY = "the length test fired one token early"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not max_new_tokens - 1"


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
        elif len(output) >= req.max_new_tokens - 1:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
