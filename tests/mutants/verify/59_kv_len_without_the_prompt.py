"""kv_len counts the output's positions only (len(output_ids) + len(tokens) - 1) and leaves out the
prompt's. Positions count from the prompt's first token, whose K/V the request holds too: the engine
sets cached_len to kv_len, so the next step would write the new tokens' K/V over the prompt's."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"every draft accepted: the model's token comes too"}
MUST_SAY = "kv_len left out the prompt"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "kv_len left out the prompt: positions count from the prompt's first token"


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
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    kv_len = len(req.output_ids) + len(tokens) - 1
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=kv_len, free_pages=req.pages[keep:])
