"""Keeps min(pages of the run, the prefix cache's pages) instead of the max: the request keeps only
the pages the prefix cache shares (none when it has no cached prefix) and gives back pages that
still hold its tokens' K/V, the newest token's page included."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too"}
MUST_SAY = "A page still needed was given back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "keep pages_for(total, page_size) pages"


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
    keep = min(-(-total // req.page_size), req.prefix_len // req.page_size)
    kv_len = total - 1
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=kv_len, free_pages=req.pages[keep:])
