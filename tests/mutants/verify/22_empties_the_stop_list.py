"""Once the request stops on a stop string, empties req.stop in place ("its stop strings are
used up"). The result is right, but the stop list is the client's, read by the scheduler and the
detokenizer after the step: leave the request as it was given."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"generated: 250 verify steps against the package's"}
MUST_SAY = "req.stop"
CAUGHT_BY = {"generated"}
HINT_SAYS = "changed the request's stop list in place"


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
    if reason == "stop" and any(s in req.decode(req.output_ids + tokens) for s in req.stop):
        req.stop.clear()
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
