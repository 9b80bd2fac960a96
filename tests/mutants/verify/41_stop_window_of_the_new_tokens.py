"""Sizes the decoded tail right (the longest stop string's UTF-8 bytes plus a margin) but takes it
from this step's new tokens only, run[: i + 1][-window:], not from output_ids + the new tokens: a
stop string that begins in the output before this step and ends in one of its tokens never shows
in the text searched, and the request goes on past it. Differs e.g. for stop=['two three'] with the
output ' one two' and the step's first token ' three': the reference stops there, this answer
keeps the whole run."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {
    "a stop string that begins before this step",
    "in the real engine, EOS, stop strings and max_tokens inside a run",
}
MUST_SAY = "only this step's tokens were decoded"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not this step's tokens alone"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    reason = None
    kept = len(run)
    for i, token in enumerate(run):
        count = len(req.output_ids) + i + 1
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop:
            text = req.decode(run[: i + 1][-window:])
            if any(s in text for s in req.stop):
                reason = "stop"
        if reason is None and count >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            kept = i + 1
            break
    tokens = run[:kept]
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
