"""Compares draft i with targets[i + 1], reading targets[0] as the model's prediction for a position
that was already known. targets[i] is what the model predicts after the tokens before draft i, so it is
draft i's own check: shifted by one, the drafts are accepted or rejected against the wrong predictions
and the run that follows is wrong."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too"}
MUST_SAY = "accepted: yours 0, expected 3"
CAUGHT_BY = {"generated", "hand"}
HINT_SAYS = "accept draft j while drafts[j] == targets[j]"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    n = 0
    while n < len(drafts) and drafts[n] == targets[n + 1]:
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
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
