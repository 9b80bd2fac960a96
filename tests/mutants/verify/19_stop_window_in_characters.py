"""Decodes a tail of the output as many tokens long as the longest stop string has characters,
plus a margin of 4. An emoji or a CJK character is 3 or 4 bytes in UTF-8, and the byte-level
tokenizer can spend a token on each byte: '🚀🚀🚀' is 3 characters but spans 9 tokens, so it never
fits in a window of 7 and the request runs past it. The window must be counted in bytes."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"a stop string of multi-byte characters"}
MUST_SAY = "count the window in bytes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "count the tail in bytes, not characters"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    tokens, reason = [], None
    for token in drafts[:n] + [targets[n]]:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-(max(map(len, req.stop)) + 4) :]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(n, tokens, reason, total - 1, req.pages[keep:])
