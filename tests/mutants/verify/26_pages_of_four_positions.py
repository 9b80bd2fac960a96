"""Counts pages of 4 positions, the page size of the notebook's example, instead of
req.page_size. On an engine with pages of 1, 8 or 16 positions it gives back pages that still hold
valid K/V, or keeps pages of rejected drafts."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"generated: 250 verify steps against the package's"}
MUST_SAY = "pages"
CAUGHT_BY = {"generated"}
HINT_SAYS = "use req.page_size, the engine's page size"


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
    keep = -(-total // 4)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
