"""Reports accepted as the drafts kept after the cut (len(tokens) - 1). The acceptance counters and
the backoff of failing drafts are about the drafts the model agreed with: a draft the model
accepted is accepted even if an EOS before it ends the request."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"a finish: kv_len and pages of the cut run"}
MUST_SAY = "before any cut"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "accepted counts the drafts the model agreed with, before any cut by a finish"


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
    return VerifyResult(min(n, len(tokens) - 1), tokens, reason, total - 1, req.pages[keep:])
