"""min_p on probabilities formed by hand with exp, without the row's max subtracted (stretch of exercise 7).

softmax's stable form is exp(x - max) / sum(exp(x - max)): with the max subtracted, no exp is above 1.
An answer that writes `p = torch.exp(row / T); p = p / p.sum()` agrees with the reference on ordinary
logits, but once a logit divided by the temperature passes about 88.7 (float32; 709.8 in float64), exp
gives inf, inf / inf is NaN, and every comparison with NaN is False: the cut keeps or drops the wrong
tokens. Such rows are in the contract: a logit_bias goes up to +100, and a low temperature multiplies
the logits. `overflowed` names this for a wrong row whose scaled top logit is that large, when the answer
also makes it on a probe of its own: a row it cuts right, and the same row shifted up by 100 (a shift
changes no probability, so only the size of the numbers differs), which it cuts wrong.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _chain,
    _close,
    _describe,
    _first_difference,
    _min_p_of,
    _req,
    _rows,
    reference_chain,
)
from minisgl_edu.grading.logits_chain.min_p_probes import PROBE_ROW

# exp overflows float32 above ln(its largest value), about 88.72; a row below it cannot show this mistake
# in float32 (a float64 answer overflows later, at 709.78, which the probe's third row reaches).
FLOAT32_EXP_LIMIT = math.log(torch.finfo(torch.float32).max)
SHIFT = 100.0  # as large as the contract's largest logit_bias

OVERFLOW_HINT = (
    "exp of a large logit is inf (above about 88.7 in float32, 709.8 in float64), and inf / inf is NaN: form "
    "p stably, subtracting the row's max before exp (torch.softmax(row / temperature, dim=-1) does that), or "
    "compare on the logits: keep logit / temperature >= max(logit / temperature) + math.log(min_p)"
)


def overflows_on_probe(fn: Any) -> bool:
    """The answer cuts the probe row right at temperature 1, and the same row plus 100 wrong, at temperature
    1 (exp overflows float32) or 0.1 (it overflows float64 too)."""
    small, big = PROBE_ROW, [x + SHIFT for x in PROBE_ROW]
    logits = _rows(small, big, big)
    reqs = [_req(temperature=t, min_p=0.1) for t in (1.0, 1.0, 0.1)]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return False  # (the case's own failure says what is wrong with a crash)
    want = reference_chain(logits.clone(), reqs).float()
    return _close(got[0], want[0]) and not (_close(got[1], want[1]) and _close(got[2], want[2]))


def scaled_top(logits: torch.Tensor, reqs: list[Req], i: int) -> float:
    """Row i's largest logit after the other links, divided by its temperature: what exp must hold."""
    before = _chain(logits, reqs)[i]
    finite = before[torch.isfinite(before)]
    return float(finite.max()) / reqs[i].sampling_params.temperature if finite.numel() else 0.0


def overflow_said(fn: Any, i: int, logits: torch.Tensor, reqs: list[Req]) -> Optional[str]:
    """What went wrong in row i when it samples with min_p, its scaled top logit overflows exp, and the
    answer overflows on the probe too; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or _min_p_of(sp) <= 0 or sp.is_greedy:
        return None
    top = scaled_top(logits, reqs, i)
    if top <= FLOAT32_EXP_LIMIT or not overflows_on_probe(fn):
        return None
    return (
        f"the top logit divided by the temperature is {top:.4g}: exp of it is inf, inf / inf is NaN, and every "
        "comparison with NaN is False, so min_p kept or dropped the wrong tokens (your function cuts a row right, "
        f"and the same row plus {SHIFT:g}, which has the very same probabilities, wrong)"
    )


def overflowed(
    fn: Any, i: int, got: torch.Tensor, want: torch.Tensor, logits: torch.Tensor, reqs: list[Req]
) -> Optional[tuple[str, str]]:
    """The message and hint for wrong row i when `overflow_said` finds exp's overflow in it."""
    said = overflow_said(fn, i, logits, reqs)
    if said is None:
        return None
    return f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}. In this row {said}", (
        OVERFLOW_HINT
    )


def overflow_in_batch(fn: Any, logits: torch.Tensor, reqs: list[Req]) -> Optional[tuple[str, str]]:
    """`overflowed` for the batch's first wrong row. Asked before the other readings of a min_p case: a cut
    that NaN made keep everything looks like min_p skipped or never written, one that dropped everything
    like a threshold of the wrong size."""
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return None  # (check_rows says what is wrong with a crash)
    want = reference_chain(logits.clone(), reqs).float()
    i = next((i for i in range(len(reqs)) if not _close(got[i], want[i])), None)
    return None if i is None else overflowed(fn, i, got, want, logits, reqs)
