"""min_p's cut taken from the top token's position: `scaled.argmax()` where `scaled.max()` belongs.

Where this sits: check.py calls `cut_at_the_argmax` when threshold.py has found that a row's min_p cut
sits at the wrong height (its hint THRESHOLD). argmax() returns the index of the most likely token,
so a cut written `scaled < scaled.argmax() + math.log(min_p)` depends on where the top token is, not
on its logit. threshold.py can only say the cut is of the wrong size; here the row is played with
that cut, and the answer runs once more on rows of its own where the top token sits at index 1
(the cut falls below the right one: token 0 is kept too) and at index 9 with a logit of 2 (the cut
lands above every logit: the whole row goes). Only an answer that cuts both where the index puts
it is told about argmax.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import NEG_INF, _call, _chain, _close, _describe, _min_p_of, _req, _rows

# min_p 0.5 at temperature 1: the right cut keeps tokens 1 and 2 (5 and 4.8) of the first row and
# token 9 alone of the second; a cut at the argmax's index keeps token 0 too (above 1 + ln 0.5) in
# the first and nothing at all in the second (9 + ln 0.5 is above its top logit, 2).
PROBE_ROWS = (
    [1.0, 5.0, 4.8, 0.0, -1.0, -2.0, -0.5, 0.5, -3.0, -1.5, 0.2, -0.2],
    [0.0, -1.0, 0.5, 1.0, -2.0, 0.2, -0.5, 1.5, -1.5, 2.0, -3.0, 0.8],
)


def _played(before: torch.Tensor, min_p: float, temperature: float) -> torch.Tensor:
    """`before` (the row after every link but min_p) cut where argmax() puts it: -inf on every token
    whose scaled logit is below the top token's index + ln(min_p)."""
    scaled = before.float() / temperature
    out = before.float().clone()
    out[scaled < float(scaled.argmax()) + math.log(min_p)] = NEG_INF
    return out


def _cuts_at_the_index(fn) -> bool:
    """On rows of its own, the answer's min_p cut is the one the top token's index gives, both times."""
    logits = _rows(*PROBE_ROWS)
    reqs = [_req(temperature=1.0, min_p=0.5) for _ in PROBE_ROWS]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False
    return all(_close(got[j], _played(logits[j], 0.5, 1.0)) for j in range(len(PROBE_ROWS)))


def cut_at_the_argmax(
    fn, i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req]
) -> Optional[tuple[str, str]]:
    """(message, hint) when row i is cut at its top token's index + ln(min_p) and the answer does the
    same on the probe rows; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or _min_p_of(sp) <= 0 or sp.is_greedy:
        return None
    before = _chain(logits, reqs)[i]
    if not _close(got[i], _played(before, _min_p_of(sp), sp.temperature)) or not _cuts_at_the_index(fn):
        return None
    top = int((before.float() / sp.temperature).argmax())
    return (
        f"row {i} ({_describe(reqs[i])}): min_p's cut sat at {top} + ln(min_p), and {top} is the index of the row's most likely token, "
        f"not its scaled logit: on rows of logits of its own with min_p 0.5, your function kept token 0 beside "
        f"a top token at index 1 ({PROBE_ROWS[0][:3]}) and dropped every token when the top one (2.0) sat at "
        "index 9, as a cut at the index + ln(min_p) does",
        "argmax() gives the top token's index, not its logit: the cut is scaled.max() + math.log(min_p), "
        "with scaled = row / temperature",
    )
