"""With no drafts it returns the model's token at once, as "nothing to verify", and skips the
finish checks (EOS, stop strings, max_new_tokens). But that token is a new output token like any
other: when it is an end id, completes a stop string or is the last one max_new_tokens allows, the
request ends on it. Here a request with one token left and no drafts goes on (finish_reason None)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult


def _finish(req: VerifyRequest, output: list[int]):
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    if output[-1] in req.eos_ids and not req.ignore_eos:
        return "stop"
    if req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
        return "stop"
    if len(output) >= req.max_new_tokens:
        return "length"
    return None


MUST_FAIL = {"max_new_tokens counts every new token"}
MUST_SAY = "a step with no drafts"
CAUGHT_BY = {"hand"}
HINT_SAYS = "a step with no drafts (only the model's own token) is still checked for EOS"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    total = req.prompt_len + len(req.output_ids)
    if not drafts:
        keep = max(-(-(total + 1) // req.page_size), req.prefix_len // req.page_size)
        return VerifyResult(accepted=0, tokens=[targets[0]], kv_len=total, free_pages=req.pages[keep:])
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens: list[int] = []
    reason = None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        reason = _finish(req, req.output_ids + tokens)
        if reason is not None:
            break
    total += len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
