"""Builds the output to check (`req.output_ids + tokens`) BEFORE appending the token being checked:
the stop strings and the length are tested on an output without that token (EOS is right). A stop
string is seen one token after the token that completes it and 'length' one token past the limit, so
the run keeps a token after its finish. Append the token first, then check."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "a stop string across accepted tokens"}
MUST_SAY = "before the token being checked was added"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "append the token first, then check req.output_ids + tokens"


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
        output = req.output_ids + tokens  # the output so far ...
        tokens.append(token)  # ... then this step's token
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
