"""Looks for the stop strings case-insensitively (`s.lower() in text.lower()`), "the model may write
'End' where the client wrote 'END'". A stop string is matched exactly as the client wrote it
(exercise 1's rule): with stop ['END'] the text ' the end' has not produced it, and the request
must go on; here it stops with "stop" on a token a run without drafts keeps going past."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"a stop string across accepted tokens"}
MUST_SAY = "the stop string was matched with the letter case ignored"
CAUGHT_BY = {"hand"}
HINT_SAYS = "do not lower() or casefold() the text or the stop strings"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    stops = [s.lower() for s in req.stop]
    tokens: list[int] = []
    reason = None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif stops and any(s in req.decode(output[-window:]).lower() for s in stops):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
