"""Reports kv_len as after a plain decode step, prompt and output before this step: the
newest token's K/V was computed in this pass, so it counts. But so were the accepted drafts', at
their own positions, and they are now tokens of the request: kv_len counts every token it has but
its newest, the accepted drafts included. Too short a kv_len makes the prefix cache take fewer
tokens than it could, and the next step recompute nothing for them."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"kv_len: the valid K/V positions", "generated: 250 verify steps against the package's"}
MUST_SAY = "left out the accepted drafts"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "accepted drafts included"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    window = max((len(s.encode()) for s in req.stop), default=0) + 4
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, req.prompt_len + len(req.output_ids), req.pages[keep:])
