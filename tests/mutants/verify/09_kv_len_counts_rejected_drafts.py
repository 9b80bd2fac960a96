"""Reports every position the forward pass computed as valid K/V, the rejected drafts' included.
The scheduler sets req.cached_len to it, and a finished request's first cached_len tokens go into
the prefix cache: K/V computed for a rejected draft would be cached under the token that replaced
it, and a later request with the same start would read it."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"kv_len: the valid K/V positions", "in the real engine, drafts rejected at every place"}
MUST_SAY = "unverified K/V"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "kv_len counted the positions of the rejected drafts"


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
    computed = req.prompt_len + len(req.output_ids) + len(drafts)
    return VerifyResult(n, tokens, reason, computed, req.pages[keep:])
