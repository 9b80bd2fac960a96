"""Thinks the model's own token only replaces a rejected draft: when every draft is accepted it adds
nothing. But the logits at the last position are the model's next token after all the drafts, a
token computed for free (the "bonus"): a verify step always gives accepted drafts + 1 tokens."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too", "in the real engine, drafts rejected at every place"}
MUST_SAY = "bonus"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the model's token at the last position (targets[k]) still comes"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] if n == len(drafts) and drafts else drafts[:n] + [targets[n]]
    tokens, reason = [], None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(
            s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
        ):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
