"""min_p's cut dropped every token of a row, the most likely one too (stretch of exercise 7).

min_p keeps a token when logit / T >= max(logit / T) + ln(min_p). For min_p in (0, 1], ln(min_p) <= 0,
so the top token always stays. A cut whose offset from the max is positive lies above every token. Two
mistakes put it there, told apart by the cut's place at min_p 1:
- math.log1p(min_p), taken for "the accurate log of a small number", is ln(1 + min_p), above 0 for every
  min_p: at min_p 1 the cut is max + ln 2, and the row is still all -inf;
- max - ln(min_p), the log subtracted ("the cut lies ln(min_p) below the max", its sign counted twice):
  -ln(min_p) is above 0 for min_p < 1 but 0 at min_p 1, where the cut sits at the max and keeps exactly
  the top token.

`read_difference` (readings.py) asks this for a wrong row that samples with min_p. It names a mistake
only when the row came back all -inf where the reference keeps tokens, and the answer does the same on
a row of its own at temperature 1 with min_p 0.01 (`cut_above_max`), then reads min_p 1 on that row.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _describe, _first_difference, _min_p_of, _req, _rows

NO_TOKEN_LEFT_HINT = (
    "math.log1p(min_p) is ln(1 + min_p), above 0, so a cut at max + log1p(min_p) lies above every token and drops "
    "the whole row: the cut is max(logit / temperature) + math.log(min_p), and math.log(min_p) <= 0 keeps the top "
    "token"
)

_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]


SUBTRACTED_HINT = (
    "the cut is max(logit / temperature) + math.log(min_p): math.log(min_p) <= 0 is ADDED to the max, so the cut "
    "lies at or below the top token; max - math.log(min_p) subtracts it and puts the cut above every token"
)


def _all_dropped(fn, min_p: float) -> Optional[bool]:
    """Whether the answer sets every token of _ROW to -inf at temperature 1 and this min_p; None if it raises."""
    try:
        got = _call(fn, _rows(_ROW), [_req(temperature=1.0, min_p=min_p)])
    except Exception:
        return None
    return bool(torch.isneginf(got[0]).all())


def cut_above_max(fn) -> Optional[str]:
    """'log1p' when the answer drops every token of a row of its own at temperature 1 with min_p 0.01 and
    with 1; 'subtracted' when it drops every token at 0.01 and 0.5 but keeps exactly the top token at 1
    (a cut at max - ln(min_p), which is the max at min_p 1); None otherwise."""
    if not _all_dropped(fn, 0.01):
        return None
    if _all_dropped(fn, 1.0):
        return "log1p"
    try:
        at_one = _call(fn, _rows(_ROW), [_req(temperature=1.0, min_p=1.0)])[0]
    except Exception:
        return None
    top_only = bool(torch.isfinite(at_one).sum() == 1) and bool(torch.isfinite(at_one[0]))  # _ROW's max is [0]
    return "subtracted" if top_only and _all_dropped(fn, 0.5) else None


def no_token_left(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Optional[tuple[str, str]]:
    """(message, hint) when row i samples with min_p, came back all -inf where the reference keeps a token,
    and the answer drops every token on the probe rows too; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or not min_p or _min_p_of(sp) <= 0 or sp.is_greedy:
        return None
    if not bool(torch.isneginf(got[i]).all()) or not bool(torch.isfinite(want[i]).any()):
        return None
    cut = cut_above_max(fn)
    where = f"row {i} ({_describe(reqs[i])}): min_p dropped every token, the most likely one too "
    where += f"({_first_difference(got[i], want[i], logits[i])}). On a row of its own at temperature 1, your function "
    if cut == "log1p":
        return (
            where + "drops every token with min_p 0.01 and with min_p 1: its cut lies above max(logit / temperature), "
            "so what it adds to the max is positive for every min_p, as math.log1p(min_p) = ln(1 + min_p) is. "
            "ln(min_p) is below 0 for min_p < 1 and 0 at min_p 1: the top token always stays",
            NO_TOKEN_LEFT_HINT,
        )
    if cut == "subtracted":
        return (
            where + "drops every token with min_p 0.01 and 0.5, and keeps exactly the top token with min_p 1: its "
            "cut lies -ln(min_p) above the max (0 at min_p 1), as max - ln(min_p) puts it. ln(min_p) is below 0 "
            "for min_p < 1: added to the max, it puts the cut below the top token",
            SUBTRACTED_HINT,
        )
    return None
