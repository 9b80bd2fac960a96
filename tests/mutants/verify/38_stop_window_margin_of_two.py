"""Decodes a tail of the longest stop string's UTF-8 bytes plus a margin of 2 tokens ("the token it
starts in and one spare"). With ignore_eos an end id stays in the output and decodes to '' (req.decode
skips special tokens), and exercise 1's rules, which each new token obeys, allow up to three of them
among a stop string's tokens: a stop string of b bytes, one token a byte, then spans b + 3 tokens and
a tail of b + 2 cuts off its first byte. Differs e.g. for stop=['1+2'] with the end ids 2, 0 and 2
among its tokens ('1' in the output; drafts 2, 0, '+', 2, '2', ' one'), ignore_eos set: the
reference stops at draft 4, this answer keeps every draft and the model's token."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "a margin too small for three ignored end ids"
CAUGHT_BY = {"hand"}
HINT_SAYS = "your margin is too small for three ignored end ids"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 2  # the token it starts in, one spare
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
