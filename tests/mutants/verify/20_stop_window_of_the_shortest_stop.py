"""Sizes the decoded tail by the shortest stop string ("enough for the first one to show"), in
bytes plus a margin. A longer stop string of the same list can span more tokens than that tail
holds: the request never stops on it. Every stop string of the list must fit in the tail, so the
longest one sizes it."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"a stop string of multi-byte characters", "generated: 250 verify steps against the package's"}
MUST_SAY = "not the shortest"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the longest stop string of the list sizes the tail"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    window = min((len(s.encode()) for s in req.stop), default=0) + 4
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
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
