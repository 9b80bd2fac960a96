"""Tests EOS and stop strings token by token, then cuts the run to the tokens left under
max_new_tokens after the loop, keeping the reason the loop found. A stop string that completes only
after the max_new_tokens-th token then gives 'stop', though that token ended the request first:
every new token is checked as if it came alone, the length too, and the first finish met wins."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"max_new_tokens counts every new token"}
MUST_SAY = "something after the max_new_tokens-th token decided"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the length limit was not tested on each new token as it came"


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
        if reason is not None:
            break
    # the length cuts the run once it is through
    room = req.max_new_tokens - len(req.output_ids)
    if len(tokens) >= room:
        tokens = tokens[:room]
        if reason is None:
            reason = "length"
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
