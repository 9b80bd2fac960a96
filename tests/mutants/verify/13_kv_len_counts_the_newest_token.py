"""Counts the newest token as computed: kv_len = total. Its K/V is computed in the next step (it is
that step's input), so the prefix cache would take a token whose position holds a rejected draft's
K/V, or nothing at all."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"kv_len: the valid K/V positions", "in the real engine, with n-gram drafts"}
MUST_SAY = "newest token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "kv_len counted the newest token"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
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
    return VerifyResult(n, tokens, reason, total, req.pages[keep:])
