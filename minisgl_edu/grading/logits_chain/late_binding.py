"""Every row given the links of the batch's LAST request: the answer builds one function per row inside
the loop (`def apply(row): ...` or a lambda that reads `req` and `sp`) and calls them after the loop.
A function reads the loop's variables when it is called, not when it is made, so by then `req` and
`sp` hold the last request's values, and every row that uses the chain gets that request's penalties,
bias, grammar and min_p (none at all where the last request asks for nothing).

`check_rows` (check.py) asks this for a wrong row that is right alone, before one request's single
setting used for every row (borrowed.py). It names the mistake only when the whole batch is so (each
row that uses the chain is the reference's for its own request or for the last one the loop saw, the
batch's last request or the last that uses the chain; row i the latter) and the answer does the same
on a small batch of its own (`late_on_probe`): a row with a repetition penalty followed by a row with
a logit_bias comes back with that bias and no penalty, while the last row is right. An answer that
reads every setting from reqs[0] fails that probe.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _close_all,
    _describe,
    _first_difference,
    _reference,
    _req,
    _rows,
    _uses_chain,
)

LATE_HINT = (
    "a function made inside the loop (def or lambda) reads req and sp when it is called, not when it is made: "
    "called after the loop, every one of them sees the last request's values. Apply each row's links inside "
    "the loop, or bind the values when the function is made (def apply(row, req=req, sp=sp): ...)"
)

_ROW = [2.0, 1.0, 0.5, -1.0, 0.0, 1.5, -0.5, 0.25, -2.0, 1.0, 0.75, -1.5]


def late_on_probe(fn) -> bool:
    """On a batch of its own (repetition penalty 2 on token 1, then a bias of +3 on token 3), the answer
    gives row 0 the second request's bias and no penalty, and row 1 what it asks for."""
    logits = _rows(_ROW, _ROW)
    reqs = [_req(prompt=(1,), repetition_penalty=2.0), _req(prompt=(11,), logit_bias={3: 3.0})]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False
    late = _reference(logits, [reqs[1], reqs[1]], False)
    return _close_all(got, late) and not _close(got[0], _reference(logits, reqs, False)[0])


def _as_request(logits, k: int, req: Req, min_p: bool) -> torch.Tensor:
    """Row k of the batch through the reference's chain, with `req`'s links in place of its own."""
    return _reference(logits[k : k + 1], [req], min_p)[0]


def last_request_links(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i came back with the links of the batch's last request (or of the last one
    that uses the chain, where the loop ran over those only), every other row is its own or that
    request's, and the answer does so on the probe batch; None otherwise."""
    users = [k for k, r in enumerate(reqs) if _uses_chain(r)]
    for j in dict.fromkeys([len(reqs) - 1, *users[-1:]]):  # the loop's last request, then the last user
        if fn is None or j == i or not _close(got[i], _as_request(logits, i, reqs[j], min_p)):
            continue
        if all(_close(got[k], want[k]) or _close(got[k], _as_request(logits, k, reqs[j], min_p)) for k in users):
            if not late_on_probe(fn):
                return None
            return (
                f"row {i} ({_describe(reqs[i])}): this row came back with the links of row {j}'s request, the last "
                f"one the loop saw ({_describe(reqs[j])}), not with its own "
                f"({_first_difference(got[i], want[i], logits[i])}). On a batch of two rows, a repetition penalty "
                "then a logit_bias, the first row got the bias and no penalty too",
                LATE_HINT,
            )
    return None
