"""Tests EOS and stop strings token by token, but the length limit only once, after the loop, on the
whole run ("the run is flagged 'length' if it reached the limit"). Every new token is checked as if it
came alone, the length too: the max_new_tokens-th token ends the run with 'length', and the tokens
after it are cut, not kept past the limit."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token"}
MUST_SAY = "the run went on past it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "check each new token as if it came alone"


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
    # the length is checked once the run is through
    if reason is None and len(req.output_ids) + len(tokens) >= req.max_new_tokens:
        reason = "length"
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
