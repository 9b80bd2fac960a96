"""Takes the model's own token as targets[-1], "the last target", reading the shape of a sampled
request's targets (they stop at the first rejected draft, with the token drawn there) as the
general rule. With greedy decoding the targets are always k+1 long: targets[-1] is the token after
ALL the drafts, the right one only when every draft was accepted; at a first mismatch the model's
token is targets[n]. Differs e.g. on the notebook's example: drafts [13, 14, 15, 16, 17], targets
[13, 14, 99, 16, 17, 18]: the reference's tokens are [13, 14, 99], this answer's [13, 14, 18]."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"the first mismatch ends the run"}
MUST_SAY = "taken as the last target"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "targets[n], n the drafts accepted, not targets[-1]"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[-1]]  # the model's own token comes last
    # 2. cut: each new token is checked as if it had come in a step of its own. A stop string of
    # b bytes in UTF-8 spans at most b tokens (a token stands for at least one byte), plus a margin
    # for the token its text begins in and for special tokens, which decode to nothing.
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
    # 3. roll back: valid K/V for every token but the newest; pages for positions 0..total-1
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
    ### END SOLUTION
