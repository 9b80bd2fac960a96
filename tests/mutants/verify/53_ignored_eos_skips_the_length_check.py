"""With ignore_eos, an end id leaves the loop's turn early (`continue`) once the EOS test has let it
pass, so the stop-string and length tests never run on it. An ignored end id is still a new output
token: when it is the max_new_tokens-th, the request ends on it with 'length'. Here the run goes on
past an ignored end id that reaches max_new_tokens."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "the length test was skipped for it because it is an end id"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the length test was skipped for it because it is an end id (0) that ignore_eos lets pass"


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
        if token in req.eos_ids:
            if not req.ignore_eos:
                reason = "stop"
                break
            continue
        if req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
