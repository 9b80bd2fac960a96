"""Tests the length limit on the request's positions, `prompt_len + len(output) >= max_new_tokens`,
reusing the sum it needs for kv_len and the pages. max_new_tokens counts generated tokens only: with the
prompt counted, a request stops with 'length' prompt_len tokens early (at once when the prompt alone is
as long as the budget), and where the cut falls moves with prompt_len."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token", "'stop' beats 'length'"}
MUST_SAY = "the length test counted the prompt"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "max_new_tokens counts generated tokens only"


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
        total = req.prompt_len + len(output)  # positions 0..total-1
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif total >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
