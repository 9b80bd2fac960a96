"""min_p's cut read back from a wrong row as a threshold on the logits (stretch of exercise 7).

min_p keeps a token when p >= min_p * max(p), at the row's temperature; on the logits that is
logit / T >= max(logit / T) + ln(min_p). A student who writes the cut on the logits and gets its
size wrong (log10 or log2 in place of the natural log, a min_p squared, a sign) still drops the
tokens below SOME cut: the row is the chain's row with -inf on exactly the tokens whose scaled logit
is below a line, but the line sits elsewhere. `wrong_size` recognises such a row, works out the
range of cuts that keep exactly its tokens, and says which multiplier of max(p) it amounts to, or
which logarithm it is when log10(min_p) or log2(min_p) falls in that range.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

THRESHOLD = (
    "keep p >= min_p * max(p): on the logits, logit / temperature >= max(logit / temperature) + math.log(min_p), "
    "the natural log"
)
OTHER_LOGS = {"log10": math.log(10), "log2": math.log(2)}  # log_b(min_p) = ln(min_p) / ln(b)


def _cut_range(got: torch.Tensor, before: torch.Tensor, temperature: float) -> Optional[tuple[float, float]]:
    """(lo, hi]: the offsets from the top scaled logit at which a cut keeps exactly the tokens `got`
    keeps, when `got` is `before` (the row after the other links) with -inf on some tokens and every
    token kept scores above every token dropped; None when the row is not such a cut."""
    finite = torch.isfinite(before)
    dropped = finite & torch.isneginf(got)
    kept = finite & ~dropped
    if not bool(dropped.any()) or not bool(kept.any()):
        return None
    if not bool(torch.allclose(got[kept], before[kept], rtol=1e-4, atol=1e-4)):
        return None
    scaled = before.float() / temperature
    top = float(scaled[finite].max())
    lo, hi = float(scaled[dropped].max()) - top, float(scaled[kept].min()) - top
    return (lo, hi) if lo < hi else None


# Temperatures a cut may have been made at by mistake, other than the row's T and 1 (mistakes.py names 1).
OTHER_TEMPERATURES = {
    "1 / temperature: the logits were multiplied by the temperature, not divided": lambda t: 1 / t,
    "temperature squared: the logits were divided by the temperature twice": lambda t: t * t,
}


def _other_temperature(lo: float, hi: float, right: float, temperature: float) -> Optional[tuple[str, str]]:
    """The message and hint for a cut that is min_p's own at another temperature than the row's: on
    the logits as they are, min_p at temperature t cuts at max + t * ln(min_p); the answer's cut lies in
    (lo, hi] * temperature. Named only when exactly one of OTHER_TEMPERATURES fits and 1 does not."""
    fits = [
        (what, at(temperature))
        for what, at in OTHER_TEMPERATURES.items()
        if lo * temperature < at(temperature) * right <= hi * temperature
    ]
    if temperature == 1 or len(fits) != 1 or lo * temperature < right <= hi * temperature:
        return None
    what, t = fits[0]
    return (
        f"min_p's cut is the one it makes at temperature {t:.3g}, {what} (the row's temperature is "
        f"{temperature:g}): the tokens kept are exactly those min_p keeps in softmax(logits / {t:.3g})",
        f"min_p's cut sat at temperature {t:.3g}, {what}: p = softmax(logits / temperature), so keep "
        "logit / temperature >= max(logit / temperature) + math.log(min_p)",
    )


def wrong_size(got: torch.Tensor, before: torch.Tensor, min_p: float, temperature: float) -> Optional[tuple[str, str]]:
    """The message and hint for a row cut at a threshold of the wrong size, or None when the row is
    not a cut on the scaled logits, or its cut is where ln(min_p) puts it."""
    cut = _cut_range(got, before, temperature)
    if cut is None:
        return None
    lo, hi = cut
    right = math.log(min_p)
    if lo < right <= hi:
        return None
    for name, base in OTHER_LOGS.items():
        if lo < right / base <= hi:
            return (
                f"min_p's threshold on the logits used {name}(min_p) = {right / base:.3g}, not ln(min_p) = "
                f"{right:.3g}: the tokens kept are exactly those above max(logit / temperature) + {name}(min_p). "
                "p >= min_p * max(p) becomes logit / temperature >= max + ln(min_p) with the natural log, the "
                "inverse of the softmax's exp",
                f"on the logits the cut is max(logit / temperature) + math.log(min_p), the natural log, "
                f"not math.{name}",
            )
    other = _other_temperature(lo, hi, right, temperature)
    if other is not None:
        return other
    return (
        f"min_p's cut is a threshold of the wrong size: the tokens kept are those whose probability is at least "
        f"{math.exp(lo):.3g} to {math.exp(hi):.3g} times the top one's (any factor in that range keeps the same "
        f"tokens), not min_p {min_p:g} times",
        THRESHOLD,
    )
