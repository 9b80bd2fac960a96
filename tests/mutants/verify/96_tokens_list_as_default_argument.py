"""Collects the kept tokens in a list given as a default argument (`tokens: list[int] = []`), "an
accumulator that starts empty". Python evaluates a default once, when the def runs: every call
appends to the same list, so from the second step on `tokens` holds the tokens of every earlier
step (of every request) before this step's, and the length test and kv_len count them too."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too"}
MUST_SAY = "your tokens start with tokens of earlier calls"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a list that outlives the call"


def verify_step(req, drafts, targets, tokens: list[int] = []):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
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
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
