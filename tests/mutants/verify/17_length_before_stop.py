"""Checks the length before EOS and stop strings: when the last token allowed is also an EOS or
completes a stop string, the request says "length" (cut off) although the model ended its answer."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"'stop' beats 'length'"}
MUST_SAY = "'stop' wins"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "'stop' wins over 'length'"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if len(output) >= req.max_new_tokens:
            reason = "length"
        elif token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(
            s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
        ):
            reason = "stop"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
