"""Takes the pages to give back as req.pages[-drop:], drop the number of pages the request no longer
needs. When every page is still needed, drop is 0 and req.pages[-0:] is req.pages[0:], the whole
row, not an empty list: a step whose tokens fill the reserved pages (every draft accepted) gives
back every page, the prompt's and the prefix cache's included. The slice must start from the pages
kept, req.pages[keep:]."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too", "generated: 250 verify steps against the package's"}
MUST_SAY = "nothing was to be given back here, yet every page of the row was"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "req.pages[-drop:] with drop == 0 is req.pages[-0:]"


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
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    drop = len(req.pages) - keep
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[-drop:])
