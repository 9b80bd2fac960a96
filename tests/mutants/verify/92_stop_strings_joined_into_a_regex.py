"""Looks for the stop strings with one pattern, `re.search("|".join(req.stop), tail)`, without
re.escape. A stop string is plain text: read as a pattern, '1+2' matches '12' but not the text '1+2',
'.' matches any character and '(' raises re.error. The test is `any(s in tail for s in req.stop)`."""

from __future__ import annotations

import re

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string across accepted tokens", "an ignored EOS inside a stop string"}
MUST_SAY = "read as regular expressions"
CAUGHT_BY = {"hand"}
HINT_SAYS = "a stop string is plain text, not a pattern"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    pattern = "|".join(req.stop)  # any of the stop strings
    tokens: list[int] = []
    reason = None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and re.search(pattern, req.decode(output[-window:])):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
