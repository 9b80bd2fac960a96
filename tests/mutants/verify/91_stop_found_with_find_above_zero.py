"""Looks for each stop string with `tail.find(s) > 0`: find() gives -1 when s is absent and 0 when s
starts the text, so a stop string at the very start of the decoded tail (an output shorter than the
tail whose text begins with it) counts as absent and the run goes on past it. The test is `s in tail`
(or find(s) >= 0)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string that begins before this step"}
MUST_SAY = "find() returns 0 there"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a stop string at the very start of the decoded tail counts too"


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
        elif req.stop and any(req.decode(output[-window:]).find(s) > 0 for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
