"""Protects the prefix cache's pages with keep = max(pages needed, prefix_len): prefix_len counts
tokens, the other side of max() counts pages. With a cached prefix of 16 tokens (4 pages of 4) the
step keeps 16 pages, or the whole row when it is shorter, so pages that hold only rejected drafts are
never given back. The prefix cache owns the first pages_for(prefix_len, page_size) pages: compare
pages with pages."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"never a page of the prefix cache"}
MUST_SAY = "prefix_len is in tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "compare pages with pages"


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
    keep = max(-(-total // req.page_size), req.prefix_len)  # never free a page of the prefix cache
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
