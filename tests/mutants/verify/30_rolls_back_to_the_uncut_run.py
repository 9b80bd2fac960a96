"""Rolls back to the run the model accepted, before the finish cut: kv_len and the pages kept are
counted from len(run) (the accepted drafts and the model's token) instead of len(tokens) (the run cut
at the first token that finishes the request). When an EOS, a stop string or the length limit ends
the request inside the run, kv_len counts positions of tokens the request never gets, and the pages
that hold only those positions are kept instead of given back. E.g. prompt 10, output [11, 12], pages
of 4 (row of 5 pages), drafts [13, 2, 15, 16, 17] with EOS id 2, all accepted: tokens [13, 2],
"stop"; the reference says kv_len 13 and gives back the last page (positions 16-19), this answer
kv_len 17 and gives back nothing (the uncut run is 6 tokens: positions 0-17, 5 pages)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "a finish: kv_len and pages of the cut run"}
MUST_SAY = "kv_len counted tokens after the finish"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only the tokens the request keeps count"


def verify_step(req, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own. A stop string of
    # b bytes in UTF-8 spans at most b tokens (a token stands for at least one byte), plus a margin
    # for the token its text begins in and for special tokens, which decode to nothing.
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
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
    # 3. roll back: valid K/V for every token but the newest; pages for positions 0..total-1
    total = req.prompt_len + len(req.output_ids) + len(run)  # the positions this step verified
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
