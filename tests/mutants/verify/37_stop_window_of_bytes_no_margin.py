"""Decodes a tail of exactly as many tokens as the longest stop string has UTF-8 bytes, with no
margin ("a token stands for at least one byte, so b bytes span at most b tokens"). That holds only
for tokens that decode to text: with ignore_eos an end id stays in the output and decodes to ''
(req.decode skips special tokens), so a stop string with ignored end ids among its tokens spans
more tokens than it has bytes, the tail cuts its start off, and the request runs past a stop string
that the run without drafts stops on. Differs e.g. for stop=['🚀'] (4 bytes, three byte tokens)
with the end ids 2 and 0 among them, ignore_eos set: the reference stops at draft 2, this answer
keeps every draft and the model's token."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an ignored EOS inside a stop string"}
MUST_SAY = "exactly len(s.encode()) tokens, with no margin"
CAUGHT_BY = {"hand"}
HINT_SAYS = "an ignored end id adds a token but no text"


def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0)  # a token is at least one byte
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
