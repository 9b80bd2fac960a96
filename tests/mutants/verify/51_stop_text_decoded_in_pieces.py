"""Looks for the stop strings in req.decode(tail of output_ids) + req.decode(new tokens so far):
the output's tail and this step's tokens decoded apart, and the two strings joined. A character
whose bytes are split between the two (an emoji or a CJK character is several byte tokens in this
tokenizer) decodes to replacement characters on each side of the join, so a stop string across it
never shows and the run goes on past it. Decode the ids together: req.decode((output_ids + new
tokens)[-window:])."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "decoded in pieces"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "decoded in pieces (output tail and new tokens separately)"


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
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop:
            text = req.decode(req.output_ids[-window:]) + req.decode(tokens[-window:])
            if any(s in text for s in req.stop):
                reason = "stop"
        if reason is None and len(req.output_ids) + len(tokens) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
