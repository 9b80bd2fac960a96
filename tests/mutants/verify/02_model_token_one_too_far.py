"""Off by one on the model's token: after n accepted drafts it takes targets[n + 1], reading
targets[j] as "the model's check of draft j" (the token after it). But targets[j] is the model's
token after the newest token and drafts 0..j-1: the one that replaces draft j, so targets[n]."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"the first mismatch ends the run", "in the real engine, drafts rejected at every place"}
MUST_SAY = "one position too far"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the model's token was taken one position too far"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[min(n + 1, len(targets) - 1)]]
    tokens, reason = [], None
    for token in run:
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
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
