"""Runs the finish checks (EOS, stop strings, max_new_tokens) on each accepted draft, then appends
the model's own token (the correction or the bonus) with the length test alone, as if the model's
token could only run out the budget. But it is an output token like the drafts: when it is an end
id, or completes a stop string, the request ends on it with 'stop', as in a plain decode step. Here
the request goes on (finish_reason None) or reports 'length' where 'stop' is due."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "'stop' beats 'length'"}
MUST_SAY = "was not checked for EOS / stop strings"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not checked for EOS / stop strings like the accepted drafts"


def _finish(req: VerifyRequest, output: list[int]):
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    if output[-1] in req.eos_ids and not req.ignore_eos:
        return "stop"
    if req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
        return "stop"
    if len(output) >= req.max_new_tokens:
        return "length"
    return None


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens: list[int] = []
    reason = None
    for token in drafts[:n]:
        tokens.append(token)
        reason = _finish(req, req.output_ids + tokens)
        if reason is not None:
            break
    if reason is None:
        tokens.append(targets[n])
        if len(req.output_ids) + len(tokens) >= req.max_new_tokens:
            reason = "length"
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
