"""Runs the finish check once, on the whole run, as if the step had given one token: an EOS (or a
stop string, or the length) inside the run does not cut it, and the request goes on writing after
its end. Each new token must be checked as if it had come in a step of its own."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "in the real engine, EOS, stop strings and max_tokens inside a run"}
MUST_SAY = "the run went on past it"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "check each new token as if it came alone"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens = drafts[:n] + [targets[n]]
    output = req.output_ids + tokens
    reason = None
    if tokens[-1] in req.eos_ids and not req.ignore_eos:
        reason = "stop"
    elif req.stop and any(s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop):
        reason = "stop"
    elif len(output) >= req.max_new_tokens:
        reason = "length"
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
