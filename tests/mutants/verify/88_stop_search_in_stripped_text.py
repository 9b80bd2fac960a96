"""Looks for the stop strings in the decoded tail with its edges' whitespace stripped,
req.decode(tail).strip() ("the tokens decode with a leading space"). A stop string that ends in a
newline or a space ('\\n', 'END\\n', ' one ') ends the tail on the token that completes it, so it is
stripped away and missed there (found a token late, or never). Match the text as it is decoded."""

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"a stop string across accepted tokens"}
MUST_SAY = "with the whitespace at its ends removed"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not strip() the decoded tail"


def verify_step(req, drafts, targets):
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens, reason = [], None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]).strip() for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
