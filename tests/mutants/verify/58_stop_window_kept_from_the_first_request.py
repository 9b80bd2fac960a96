"""Works out the stop-string window once, from the first request that has stop strings, keeps it in a
module-level variable and uses it for every later request, whatever that request's own stop strings.
A later request with a longer stop string then decodes too short a tail and misses it. Each request
brings its own stop strings: size the window from them on every call, and keep nothing from an
earlier request."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"generated: 250 verify steps against the package's"}
MUST_SAY = "whatever this request's stop strings"
CAUGHT_BY = {"generated"}
HINT_SAYS = "Size the window from this request's own stop strings on every call"

_WINDOW = None


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    global _WINDOW
    if _WINDOW is None and req.stop:  # worked out once, from the first request with stop strings
        _WINDOW = max(len(s.encode("utf-8")) for s in req.stop) + 4
    window = _WINDOW or 4
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
