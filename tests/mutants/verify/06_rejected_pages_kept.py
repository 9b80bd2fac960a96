"""Gives no page back: "the next verify overwrites the rejected K/V anyway". It does, on the pages
the request still needs; but a page that holds only rejected drafts' positions stays reserved for
nothing until the request ends, and the scheduler counts it as taken."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"pages holding only rejected drafts go back", "in the real engine, drafts rejected at every place"}
MUST_SAY = "no page was given back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "no page was given back: the pages past the request's new length"


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
        elif req.stop and any(
            s in req.decode(output[-(max(len(s.encode()) for s in req.stop) + 4) :]) for s in req.stop
        ):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    return VerifyResult(n, tokens, reason, total - 1, [])
