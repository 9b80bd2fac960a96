"""Exercise 8: the verify step played again with one thing changed, for the hints that name how an
answer checks the finish.

window.py (which tail of the output is decoded), stop_match.py (how a stop string is looked for in
it) and late_checks.py (the checks run before the token is appended) each name their mistake only
when the answer's result on the failing step is the one this step gives with that change.
"""

from __future__ import annotations

from typing import Callable, Optional

from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult


def _contains(text: str, stop: list[str]) -> bool:
    return any(s in text for s in stop)


def changed_step(
    req: VerifyRequest,
    drafts: list[int],
    targets: list[int],
    *,
    tail: Optional[Callable[[list[int]], list[int]]] = None,
    found: Callable[[str, list[str]], bool] = _contains,
    late: bool = False,
) -> VerifyResult:
    """The reference verify step with one change: the stop strings looked for in `tail(output)` (by
    default the last longest-stop-in-bytes + 4 tokens), with `found(text, stop)` (by default
    `s in text`), and, when `late`, the stop strings and the length checked on the output without the
    token being checked (the EOS test reads the token itself either way)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tail = tail or (lambda ids: ids[-window:])
    tokens: list[int] = []
    reason = None
    for token in list(drafts[:n]) + [targets[n]]:
        before = req.output_ids + tokens
        tokens.append(token)
        output = before if late else req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and found(req.decode(tail(output)), list(req.stop)):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(pages_for(total, req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
