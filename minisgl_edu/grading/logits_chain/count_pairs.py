"""The frequency penalty's counts put on other output tokens than their own.

`ids = list(set(output_ids))` beside `counts = list(Counter(output_ids).values())`: a set iterates in
its own order (small ints: ascending), a Counter in first-occurrence order, so the two lists are not
aligned and a token gets another output token's count. Every count is subtracted, only on the wrong
tokens: output [6, 4, 4, 4] takes 1 x f off token 4 and 3 x f off token 6. `swapped_counts` reads the
count each output token got from the row's difference (frequency penalty f: the logit is lower by f
for each occurrence counted) and names the mistake when those counts are the true counts, shuffled
among the output tokens; readings.py asks it after its own reading of counts left out.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _describe, _token


def _counts_got(got, want, output: list[int], f: float) -> Optional[dict[int, int]]:
    """The count each output token's logit shows (its true count plus the difference over -f), when
    every other token is the chain's and each such count is a whole number; None otherwise."""
    true = Counter(output)
    counts = {}
    for t in range(want.shape[-1]):
        w, g = float(want[t]), float(got[t])
        if math.isinf(w) or math.isinf(g):
            if w != g:
                return None
            continue
        if t not in true:
            if abs(g - w) > 1e-4 + 1e-4 * abs(w):
                return None
            continue
        c = true[t] - (g - w) / f
        if abs(c - round(c)) > 1e-3:
            return None
        counts[t] = round(c)
    return counts


def swapped_counts(i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Optional[tuple[str, str]]:
    """(message, hint) when row i's frequency penalty used every output token's true count, but put some
    of them on other output tokens; None otherwise."""
    sp, output = reqs[i].sampling_params, list(reqs[i].output_ids)
    if not output or not sp.frequency_penalty:
        return None
    true = Counter(output)
    counts = _counts_got(got[i], want[i], output, sp.frequency_penalty)
    if counts is None or len(counts) != len(true) or counts == dict(true):
        return None
    if sorted(counts.values()) != sorted(true.values()):
        return None
    wrong = [t for t in true if counts[t] != true[t]]
    told = "; ".join(f"{_token(t)} occurs {true[t]} x, your row took {counts[t]} x f off it" for t in wrong)
    return (
        f"row {i} ({_describe(reqs[i])}): the frequency penalty used the right counts, but put them on the "
        f"wrong output tokens: {told}. Each count went to another output token: a list of the distinct tokens "
        "(a set's order) beside Counter(...).values() (first-occurrence order) do not line up",
        "each count went to another output token: pair each token with its own count, e.g. "
        "`for t, c in Counter(output_ids).items()` or torch.bincount; a set's order is not a Counter's",
    )
