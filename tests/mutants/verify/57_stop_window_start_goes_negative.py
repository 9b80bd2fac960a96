"""Slices the stop-string tail as output[len(output) - window:]. While the output is shorter than the
window the start is negative, and a negative start counts from the end: with an output one token
shorter than the window only the newest token is decoded, so a stop string that spans several tokens
is missed. The tail must be the last `window` tokens, or the whole output when it is shorter
(output[-window:], or output[max(0, len(output) - window):])."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string of multi-byte characters", "an ignored EOS inside a stop string"}
MUST_SAY = "negative slice start wraps around"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a negative slice start wraps around"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens: list[int] = []
    reason = None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[len(output) - window :]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
