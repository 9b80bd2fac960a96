"""Checks max_new_tokens for the accepted drafts only, and adds the model's own token after the
loop with an EOS and stop-string check alone: when that token is the last one allowed, the request
is not told it is done ("length"), and when the drafts were not capped it goes one token over."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {
    "max_new_tokens counts every new token",
    "in the real engine, EOS, stop strings and max_tokens inside a run",
}
MUST_SAY = "max_new_tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "it is the model's own token, which counts toward max_new_tokens"


def _stops(req, output):
    if output[-1] in req.eos_ids and not req.ignore_eos:
        return True
    return bool(req.stop) and any(
        s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
    )


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n]:
        tokens.append(token)
        output = req.output_ids + tokens
        if _stops(req, output):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    if reason is None:
        tokens.append(targets[n])
        if _stops(req, req.output_ids + tokens):
            reason = "stop"
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
