"""Reports accepted as the drafts among the tokens the request keeps, min(n, len(tokens)): "a draft
after the EOS was not accepted". The contract: accepted still counts the drafts the model agreed
with, before the cut (the acceptance counters and the back-off of failing drafts are about the
drafts). Differs whenever a finish cuts the run before its last agreed draft: drafts [' two', 2,
' three'] all agreed, the EOS cuts after 2 tokens: the reference says accepted 3, this answer 2."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "max_new_tokens counts every new token"}
MUST_SAY = "not the drafts among the tokens kept"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "accepted counts the drafts the model agreed with, before any cut by a finish"


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
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    accepted = min(n, len(tokens))  # the drafts among the tokens kept
    return VerifyResult(
        accepted=accepted, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:]
    )
