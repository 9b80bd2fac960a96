"""Reads ignore_eos as "ignore every way to stop but the length": with it set, stop strings are
not looked for. ignore_eos turns off the EOS test only; a stop string still ends the request."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"an ignored EOS inside a stop string", "generated: 250 verify steps against the package's"}
MUST_SAY = "turns off the EOS test only"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "ignore_eos turns off the EOS test only"


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
        elif not req.ignore_eos and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
