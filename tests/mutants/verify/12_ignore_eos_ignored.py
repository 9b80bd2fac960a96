"""Stops on every EOS id, also for a request that set ignore_eos (benchmarks do, to get a fixed
length): an accepted EOS draft cuts its run although the same request without drafts goes on."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"ignore_eos", "in the real engine, EOS, stop strings and max_tokens inside a run"}
MUST_SAY = "ignore_eos"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "with ignore_eos only stop strings and max_new_tokens end the request"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids:
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
