"""kv_len counts every token (total) when the step finishes the request, and total - 1 otherwise,
as if a finish made the newest token's K/V valid. A finish changes nothing in the roll back: the
valid positions stop one before the newest token on every step, and the prefix cache takes kv_len
tokens when the request ends, so counting one more would cache a token without its K/V."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "a finish: kv_len and pages of the cut run"}
MUST_SAY = "kv_len counted the newest token on a step that finishes the request"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "kv_len counted the newest token on a step that finishes the request"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens: list[int] = []
    reason = None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    kv_len = total if reason is not None else total - 1
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=kv_len, free_pages=req.pages[keep:])
