"""Builds "the output so far plus the new tokens" as `output = req.output_ids` and then
`output += [token]` for each token, as if `+=` made a new list. For a list `+=` extends it in place,
so every token of the run lands in req.output_ids itself. The fields returned are right, but the
contract says to leave req, drafts and targets as they are: the scheduler appends the tokens itself
(_add_token), so in the engine each accepted token would be in the output twice. Differs after any
step: output [' one', ' two'] becomes [' one', ' two', ' three', ' four', ' one']."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"the inputs are left as they were"}
MUST_SAY = "changed req.output_ids"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "build new lists"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens: list[int] = []
    reason = None
    output = req.output_ids
    for token in run:
        tokens.append(token)
        output += [token]
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(output)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
