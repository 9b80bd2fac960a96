"""Looks for a stop string only at the end of the decoded tail (tail.endswith(s)). A byte-level
token can hold more than the stop string: ' END' then a newline may be one token, so the stop
string ends inside the newest token and the text after it is in the same token. Look for it
anywhere in the tail."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"generated: 250 verify steps against the package's"}
MUST_SAY = "not endswith"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "look for it anywhere in the tail, not endswith"


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
        elif any(req.decode(output[-window:]).endswith(s) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
