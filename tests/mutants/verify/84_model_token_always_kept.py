"""Checks each accepted draft for a finish and cuts the run there, but always appends the model's own
token afterwards ("a step gives at least the token a plain decode step would have given"). Unlike a loop
without a break (which keeps the whole run), only targets[n] is added after the finishing token. When an
accepted draft finishes the request (an EOS, a stop string, the length), nothing may follow it: the
model's token comes after the end and must not be returned."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "ignore_eos", "max_new_tokens counts every new token"}
MUST_SAY = "the model's own token was appended after it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not append the model's token after the token that finishes"


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
    for j, token in enumerate(run):
        if reason is not None:  # finished on a draft: the model's token still comes with the step
            tokens.append(run[-1])
            break
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None and j == len(run) - 1:
            break
    # 3. roll back: valid K/V for every token but the newest; pages for positions 0..total-1
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
