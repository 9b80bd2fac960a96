"""min_p's cut dropped every token of a row, the most likely one too (stretch of exercise 7).

min_p keeps a token when logit / T >= max(logit / T) + ln(min_p). For min_p in (0, 1], ln(min_p) <= 0,
so the top token always stays. A cut whose offset from the max is positive lies above every token:
math.log1p(min_p), taken for "the accurate log of a small number", is ln(1 + min_p), which is above 0
for every min_p, and drops the whole row.

`read_difference` (readings.py) asks this for a wrong row that samples with min_p. It names the
mistake only when the row came back all -inf where the reference keeps tokens, and the answer does the
same on a row of its own at temperature 1 with min_p 0.01 and with min_p 1 (`drops_all_on_probe`). At
min_p 1 a cut with the sign turned (max - ln(min_p)) sits at the max and keeps the top token, so the
probe tells that mistake apart; at min_p 0.01 ln(1 + min_p) is 0.00995, still above the max.
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


def drops_all_on_probe(fn) -> bool:
    """On a row of its own at temperature 1, the answer sets every token to -inf with min_p 0.01 and with 1."""
    logits = _rows(_ROW)
    for min_p in (0.01, 1.0):
        try:
            got = _call(fn, logits, [_req(temperature=1.0, min_p=min_p)])
        except Exception:
            return False
        if not bool(torch.isneginf(got[0]).all()):
            return False
    return True


def no_token_left(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Optional[tuple[str, str]]:
    """(message, hint) when row i samples with min_p, came back all -inf where the reference keeps a token,
    and the answer drops every token on the probe rows too; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or not min_p or _min_p_of(sp) <= 0 or sp.is_greedy:
        return None
    if not bool(torch.isneginf(got[i]).all()) or not bool(torch.isfinite(want[i]).any()):
        return None
    if not drops_all_on_probe(fn):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): min_p dropped every token, the most likely one too "
        f"({_first_difference(got[i], want[i], logits[i])}). On a row of its own at temperature 1, your function "
        "drops every token with min_p 0.01 and with min_p 1: its cut lies above max(logit / temperature), so what it "
        "adds to the max is positive for every min_p, as math.log1p(min_p) = ln(1 + min_p) is. ln(min_p) is below 0 "
        "for min_p < 1 and 0 at min_p 1: the top token always stays",
        NO_TOKEN_LEFT_HINT,
    )
