"""Probes of the answer itself, for the generated case of exercise 7's stretch (min_p).

The generated case's hint (`logits_hint` in scenes.py) reads a shrunk row, and on such a row (ties,
few distinct logits) two mistakes often give the same numbers: a row whose top_k cut away a token
min_p keeps looks like a cut made with log10(min_p). So before the hint names one of these two, it
runs the answer once more on a small batch of its own, where they differ, and names the mistake only
when the answer makes it there too:

* `makes_log10_cut`: a row with neither top_k nor top_p, where log10(min_p)'s cut keeps 1 token and
  ln(min_p)'s keeps 3.
* `top_k_first`: the shrunk row equals min_p applied after the row's top_k tokens alone were kept;
  the probe's row without top_k is cut right, and the same row with top_k 2 loses a token min_p keeps.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    NEG_INF,
    _call,
    _chain,
    _close,
    _min_p_of,
    _req,
    _rows,
    reference_chain,
)

# At temperature 1 with min_p 0.1, ln's cut is 4 - 2.30 = 1.70 (tokens 0, 1, 2 stay), log10's is 4 - 1
# (token 0 alone); top_k 2 keeps tokens 0 and 1 only, so token 2, which min_p keeps, would go.
PROBE_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]

TOP_K_FIRST = (
    "min_p was decided on the row's top_k tokens alone: a token min_p keeps came out -inf because top_k would drop "
    "it (your function, on a row of logits {row} with min_p 0.1 at temperature 1, cuts right without top_k but "
    "drops token 2 with top_k 2). top_k and top_p are the sampler's own later steps, after your function returns: "
    "min_p's distribution is the row after the penalties, the bias and the mask, over the whole vocabulary, and "
    "the row you return keeps every token min_p keeps"
)


def _answer(fn: Any, logits: torch.Tensor, reqs: list[Req]) -> Optional[torch.Tensor]:
    """The answer's rows for a probe batch, or None when it raises or returns no such tensor (the case's
    own failure says what is wrong with that)."""
    try:
        return _call(fn, logits, reqs)
    except Exception:
        return None


def makes_log10_cut(fn: Any) -> bool:
    """On a row of its own, the answer drops the tokens a cut at max + log10(min_p) drops."""
    logits, reqs = _rows(PROBE_ROW), [_req(temperature=1.0, min_p=0.1)]
    got = _answer(fn, logits, reqs)
    return got is not None and _close(got[0], _chain(logits, reqs, "min_p_log10", True)[0])


def _after_top_k(row: torch.Tensor, before: torch.Tensor, k: int, ties: bool) -> torch.Tensor:
    """`row` (min_p's cut) with -inf also on the tokens the top_k of `before` drops: with `ties`, every
    token below the k-th largest logit; without, every token but the k that torch.topk picks."""
    out = row.clone()
    if ties:
        out[before < torch.topk(before, k).values[-1]] = NEG_INF
    else:
        keep = torch.zeros_like(before, dtype=torch.bool)
        keep[torch.topk(before, k).indices] = True
        out[~keep] = NEG_INF
    return out


def _looks_top_k_first(got: torch.Tensor, want: torch.Tensor, before: torch.Tensor, k: int) -> bool:
    k = min(k, before.shape[-1])
    return any(_close(got, _after_top_k(want, before, k, ties)) for ties in (True, False))


def top_k_first(fn: Any, i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req]) -> Optional[str]:
    """The hint for a min_p row that samples with top_k set and came back as min_p after top_k, when the
    answer does the same on the probe batch; None otherwise."""
    sp = reqs[i].sampling_params
    if fn is None or _min_p_of(sp) <= 0 or sp.is_greedy or sp.top_k <= 1:
        return None
    want, before = reference_chain(logits.clone(), reqs).float()[i], _chain(logits, reqs)[i]
    if _close(want, _after_top_k(want, before, sp.top_k, True)) or not _looks_top_k_first(
        got[i], want, before, sp.top_k
    ):
        return None  # top_k drops nothing min_p keeps here, or the row is not min_p after top_k
    probe = _rows(PROBE_ROW, PROBE_ROW)
    probe_reqs = [_req(temperature=1.0, min_p=0.1), _req(temperature=1.0, min_p=0.1, top_k=2)]
    mine, right = _answer(fn, probe, probe_reqs), reference_chain(probe.clone(), probe_reqs).float()
    if mine is None or not _close(mine[0], right[0]) or not _looks_top_k_first(mine[1], right[1], probe[1], 2):
        return None
    return f"row {i}: {TOP_K_FIRST.format(row=PROBE_ROW)}"
