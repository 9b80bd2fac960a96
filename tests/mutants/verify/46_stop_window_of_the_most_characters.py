"""Sizes the decoded tail by the stop string with the most characters, max(stop, key=len), then counts
that string's bytes plus 4. The string with the most characters is not always the one with the most
bytes: beside ' END' (4 characters, 4 bytes), '🚀🚀🚀' has 3 characters but 12 bytes and spans 9 tokens,
more than the 8 the tail holds, so the step misses it. The tail must be sized by
max(len(s.encode()) for s in stop)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string of multi-byte characters", "generated: 250 verify steps against the package's"}
MUST_SAY = "the stop string with the most characters"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pick the longest stop string by bytes, not by characters"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    longest = max(req.stop, key=len, default="")
    window = len(longest.encode("utf-8")) + 4
    tokens: list[int] = []
    reason = None
    for token in run:
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
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
