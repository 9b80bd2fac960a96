"""Cuts the drafts to `max_new_tokens - len(output_ids) - 1` itself ("the scheduler caps them at
that; make sure of it here too") before accepting. The tokens and finish reason come out the same
(the model's token at the cap is the next draft when the model agrees), but drafts the scheduler
should have capped and the model agreed with are not counted: `accepted` comes out smaller than the
number of drafts the model agreed with. Differs e.g. with output_ids of 8 tokens, max_new_tokens 10,
drafts [5, 6, 7] and targets [5, 6, 7, 9]: the reference answers accepted=3, tokens [5, 6], "length";
this answer accepted=1, tokens [5, 6], "length"."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"ignore_eos", "max_new_tokens counts every new token"}
MUST_SAY = "do not cut the drafts to the tokens left yourself"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "also past max_new_tokens: do not cut the drafts"


def verify_step(req, drafts, targets):
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    # the scheduler caps the drafts at max_new_tokens - len(output_ids) - 1: make sure of it here too
    drafts = drafts[: max(req.max_new_tokens - len(req.output_ids) - 1, 0)]
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens = []
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
