"""Builds the output once, before the loop, from the whole accepted run (output = output_ids + run),
and checks each token of the run against that: the stop-string window and the length test then see
the tokens AFTER the one being checked. A stop string, or the length limit, that a later token of the
run reaches cuts the run at its first token, where the request without drafts would have gone on.
The contract: "each new token obeys the rules of exercise 1 as if it had come in a step of its own".
Differs e.g. with max_new_tokens = len(output_ids) + 3 and two drafts, both accepted (a run of
3 tokens with the model's bonus): the reference keeps all 3 with "length" on the third, this answer
keeps only the first, with "length"."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token", "a stop string across accepted tokens"}
MUST_SAY = "the output was built from the whole run"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not on the whole run"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
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
    output = req.output_ids + run  # the output after this step
    for token in run:
        tokens.append(token)
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
