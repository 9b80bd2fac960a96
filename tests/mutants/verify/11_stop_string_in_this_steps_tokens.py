"""Decodes this step's tokens together, but not the output before them: a stop string that begins
in the last token of the previous step and ends in the first token of this one is missed."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {
    "a stop string that begins before this step",
    "in the real engine, EOS, stop strings and max_tokens inside a run",
}
MUST_SAY = "begin in the output before this step"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not this step's tokens alone"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif any(s in req.decode(tokens) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = -(-total // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
