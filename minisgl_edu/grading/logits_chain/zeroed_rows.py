"""Rows that ask for nothing left at zero: the answer builds its result in a fresh tensor of zeros
(`out = torch.zeros_like(logits)`) and writes into it only the rows whose request uses a link.

A row that asks for nothing must come back as the model gave it. Left at zero it is a uniform
distribution: a plain request beside a penalised one samples any token, and a greedy one always
picks token 0. `check_rows` (check.py) and the generated case's hint (scenes.py) ask this before
any other explanation of a plain row that changed: the row is all zeros where the model's is not,
and the answer does the same on a batch of the grader's own, a row with a repetition penalty (which
it gets right) beside a row that asks for nothing (which it leaves at zero).
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _describe,
    _first_difference,
    _random,
    _reference,
    _req,
    _uses_chain,
)

ZEROED = (
    "this row asks for nothing and came back all zeros: your result starts as a tensor of zeros "
    "(torch.zeros_like) and only the rows that use a link are written into it, so every other row stays at 0, a "
    "uniform distribution (a greedy row then always picks token 0). A row that asks for nothing comes back as "
    "the model gave it"
)
ZEROED_HINT = (
    "start the result from a copy of every row, out = logits.float().clone(), not torch.zeros_like(logits): a "
    "row that asks for nothing is never written, so it must already hold the model's logits"
)


def _all_zero(row: torch.Tensor) -> bool:
    return bool((row == 0).all())


def zeroes_plain_rows(fn) -> bool:
    """The answer, on a batch of the grader's own, gets a row with a repetition penalty right and leaves the
    row beside it, which asks for nothing, at zero."""
    logits = _random(2, 34)  # no logit is 0 here
    reqs = [_req((1, 2), (3,), repetition_penalty=2.0), _req((1, 2), (3,), temperature=1.0)]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False
    return _close(got[0], _reference(logits, reqs, False)[0]) and _all_zero(got[1])


def zeroed_row(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req]) -> Optional[tuple]:
    """(message, hint) when row i asks for nothing, came back all zeros where the model's row is not, and the
    answer does the same on the grader's own batch; None otherwise."""
    if not is_zeroed(fn, got[i], logits[i], reqs[i]):
        return None
    detail = _first_difference(got[i], want[i], logits[i])
    return f"row {i} ({_describe(reqs[i])}): {ZEROED} ({detail})", ZEROED_HINT


def is_zeroed(fn, got_row: torch.Tensor, given_row: torch.Tensor, req: Req) -> bool:
    """Row `got_row` of a request that asks for nothing is all zeros, the model's `given_row` is not, and
    `fn` leaves such rows at zero on the grader's own batch too."""
    if _uses_chain(req) or not _all_zero(got_row) or _all_zero(given_row.float()):
        return False
    return fn is not None and zeroes_plain_rows(fn)
