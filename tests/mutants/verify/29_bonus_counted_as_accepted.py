"""Counts the bonus token as accepted when the model agreed with every draft (accepted = k + 1),
reading `accepted` as "tokens the step accepted in a row". The contract: "`accepted` is the number of
drafts the model agreed with", so at most k: the model's own token is never a draft. Only a step in
which every draft was accepted differs: drafts [13, 14], targets [13, 14, 15]: the reference says
accepted=2, this answer 3 (the tokens, finish reason, kv_len and pages are the same). The
speculator's acceptance counters and back-off read this number."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too"}
MUST_SAY = "accepted counted the model's own token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "accepted counts drafts only, at most len(drafts)"


def verify_step(req, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
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
    if n == len(drafts):
        n += 1  # every draft accepted: the bonus token is accepted too
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
