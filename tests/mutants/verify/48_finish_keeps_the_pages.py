"""Gives no page back on a step that finishes the request: "the scheduler releases the request's
pages when it finishes anyway". It releases the pages the request holds after this step's result is
applied, and the step's result decides them: pages past the request's new length hold only rejected
drafts or tokens after the finish, and the step itself must hand them back in free_pages, finished or
not (the scheduler trims the row by free_pages before the request's pages go to the prefix cache)."""

from __future__ import annotations

from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

MUST_FAIL = {"an EOS inside the run cuts it", "a finish: kv_len and pages of the cut run"}
MUST_SAY = "a finish does not free them here"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "kept when the step finished the request"


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
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    if reason is not None:
        free_pages = []  # the request is done: its pages are released with it
    else:
        keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
        free_pages = req.pages[keep:]
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=free_pages)
