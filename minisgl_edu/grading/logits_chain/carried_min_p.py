"""A min_p carried from an earlier row: the answer keeps min_p in a variable set before the loop over the
rows and changes it only when a request sets one, so a sampling row whose request sets no min_p is cut
with the min_p of a row before it.

`check_rows` (check.py) and the generated case's hint (scenes.py) ask this for a wrong row that samples
and has no min_p of its own. The row must equal the reference's with the min_p of an earlier row, and
the answer must carry min_p on a batch of its own too (`carries_on_probe`): there a row with no min_p
at the front stays uncut (nothing before it), each row with a min_p uses its own, and each row without
one is cut by the min_p of the nearest row above it. That tells this apart from one request's min_p
used for every row (borrowed.py) and from a threshold taken from the batch's top (min_p_axis.py).
"""

from __future__ import annotations

import copy
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _close_all,
    _describe,
    _first_difference,
    _min_p_of,
    _reference,
    _req,
    _rows,
)

CARRIED_HINT = (
    "a min_p carried over from an earlier row: a request that sets no min_p has none, whatever the rows "
    "before it asked for. Read it afresh for each row, min_p = getattr(reqs[i].sampling_params, 'min_p', 0.0), "
    "rather than updating a variable set before the loop only when a request has one"
)

# At temperature 1, min_p 0.5 keeps token 0 alone and min_p 0.1 keeps tokens 0, 1 and 2 (min_p.py's row).
_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]
_PROBE_MIN_P = [None, 0.5, None, 0.1, None]  # the carried answer cuts rows 2 and 4 as 0.5 and 0.1


def _with_min_p(req: Req, value: float) -> Req:
    sp = copy.copy(req.sampling_params)
    sp.min_p = value
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def carries_on_probe(fn) -> bool:
    """On a batch of its own, the answer cuts each row without min_p by the nearest earlier row's min_p,
    and every other row right."""
    logits = _rows(*[_ROW] * len(_PROBE_MIN_P))
    reqs = [_req(temperature=1.0, min_p=m) for m in _PROBE_MIN_P]
    carried, last = [], None
    for req, m in zip(reqs, _PROBE_MIN_P):
        last = m if m is not None else last
        carried.append(req if last is None else _with_min_p(req, last))
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False
    return _close_all(got, _reference(logits, carried, True))


def carried_min_p(fn, i: int, got: torch.Tensor, logits, reqs: list[Req]) -> Optional[tuple[str, str]]:
    """(message, hint) when row i samples with no min_p of its own, came back cut as with the min_p of an
    earlier row, and the answer carries min_p on the probe batch too; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or sp.is_greedy or _min_p_of(sp) > 0:
        return None
    for j in range(i - 1, -1, -1):  # the nearest row above first
        value = _min_p_of(reqs[j].sampling_params)
        if value <= 0:
            continue
        as_carried = _reference(logits[i : i + 1], [_with_min_p(reqs[i], value)], True)[0]
        if _close(got[i], as_carried) and carries_on_probe(fn):
            want = _reference(logits, reqs, True)[i]
            return (
                f"row {i} ({_describe(reqs[i])}): this row sets no min_p, yet it was cut as with min_p {value:g}, "
                f"the min_p carried from row {j} above it ({_first_difference(got[i], want, logits[i])})",
                CARRIED_HINT,
            )
    return None
