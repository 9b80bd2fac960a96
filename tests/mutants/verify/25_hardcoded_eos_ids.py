"""Tests the token against SmolLM2's end ids, 0 and 2, written into the code instead of
req.eos_ids. Another model has other end ids (and may use 0 or 2 as ordinary tokens): the step must
use the served model's set, req.eos_ids."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"generated: 250 verify steps against the package's"}
MUST_SAY = "the served model's end ids"
CAUGHT_BY = {"generated"}
HINT_SAYS = "is in req.eos_ids"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    window = max((len(s.encode()) for s in req.stop), default=0) + 4
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in (0, 2) and not req.ignore_eos:
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
