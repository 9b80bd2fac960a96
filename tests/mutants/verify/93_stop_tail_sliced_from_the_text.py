"""Takes the stop-string tail as `req.decode(output)[-window:]`: the bracket closed one place too early,
so it keeps the last `window` CHARACTERS of the decoded text, not the text of the last `window` tokens.
A token can carry many characters: a stop string that ends inside the newest token, whose text runs on
past it by more than the margin ('two three ' completed by ' international'), falls outside that tail."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"a stop string across accepted tokens"}
MUST_SAY = "the tail was cut in characters of the decoded text, not in tokens"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "cut the tail in tokens, then decode it"


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
        elif req.stop and any(s in req.decode(output)[-window:] for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
