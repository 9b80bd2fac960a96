"""Counts the output toward max_new_tokens without the EOS tokens that ignore_eos kept ("they decode
to no text, so they are not generated tokens"). max_new_tokens counts every token the request
generated, an ignored EOS included (exercise 1): a request with ignored EOS tokens in its output,
earlier or in this run, finishes with "length" that many tokens late."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"ignore_eos"}
MUST_SAY = "count every new token"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "new tokens reaches max_new_tokens: 'length'"


def verify_step(req, drafts, targets):
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
        generated = [t for t in output if t not in req.eos_ids]  # ignored EOS tokens are no text
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(generated) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
