"""min_p's cut written in logs as a product, log(min_p) * max, where it is a sum (stretch of exercise 7).

min_p keeps a token when p >= min_p * p_max, in logs log p >= log(min_p) + log(p_max): the log of a
product is a sum. Written as log(min_p) * log(p_max), the cut is the product of two numbers <= 0, so it
is >= 0 and lies above every token unless the top token has p = 1 exactly (log p_max = 0, the cut 0);
written against the scaled logits, log(min_p) * max(logit / T), it moves the wrong way with the row's
own max (a larger max lowers the cut, a negative max lifts it above every token). Either way it depends
on the row's max, which a cut at max + math.log1p(min_p) (no_token_left.py) or a threshold of min_p
itself (mistakes.py's min_p_absolute) does not.

The probe: three rows of its own at temperature 1 with min_p 0.1: PROBE_ROW, the same row shifted down
by 10 (its top logit -6), and a row whose top token has p = 1 in float32 and float64 ([50, 0, ...]).
`multiplied_logs` names the mistake when the answer's row i is the product's cut, of the log-probabilities
or of the scaled logits, and the answer gives that same cut on all three probe rows (log1p's cut drops the
top token of [50, 0, ...] too, an absolute threshold keeps PROBE_ROW's top tokens).
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import NEG_INF, _close, _describe, _min_p_of, _reference, _req, _rows
from minisgl_edu.grading.logits_chain.min_p_probes import PROBE_ROW, _answer

SOURCES = ("log-probabilities", "scaled logits")
PROBES = (PROBE_ROW, [x - 10.0 for x in PROBE_ROW], [50.0] + [0.0] * (len(PROBE_ROW) - 1))


def _product_cut(before: torch.Tensor, temperature: float, min_p: float, source: str) -> torch.Tensor:
    """`before` (the row after the other links) cut where log(min_p) times the max of `source` puts it."""
    scaled = before.float() / temperature
    x = torch.log_softmax(scaled, dim=-1) if source == SOURCES[0] else scaled
    return before.float().masked_fill(x < math.log(min_p) * x.max(), NEG_INF)


def _on_probes(fn, source: str) -> bool:
    """The answer cuts each probe row (temperature 1, min_p 0.1) where the product of `source` puts the cut."""
    for row in PROBES:
        got = _answer(fn, _rows(row), [_req(temperature=1.0, min_p=0.1)])
        if got is None or not _close(got[0], _product_cut(torch.tensor(row), 1.0, 0.1, source)):
            return False
    return True


def _kept(row: list[float], source: str) -> str:
    """How many tokens of a probe row the product's cut keeps, in words."""
    n = int(torch.isfinite(_product_cut(torch.tensor(row), 1.0, 0.1, source)).sum())
    return {0: "drops every token", 1: "keeps only the top token"}.get(n, f"keeps {n} of the {len(row)} tokens")


def multiplied_logs(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Optional[tuple[str, str]]:
    """(message, hint) when row i samples with min_p and came back cut at log(min_p) times the max of its
    log-probabilities (or scaled logits), and the answer cuts the probe rows there too; None otherwise."""
    req, sp = reqs[i], reqs[i].sampling_params
    if fn is None or not min_p or _min_p_of(sp) <= 0 or sp.is_greedy or _close(got[i], want[i]):
        return None
    before = _reference(logits[i : i + 1], [req], False)[0]  # the row after every link but min_p
    cuts = {s: _product_cut(before, sp.temperature, _min_p_of(sp), s) for s in SOURCES}
    source = next((s for s in SOURCES if _close(got[i], cuts[s]) and _on_probes(fn, s)), None)
    if source is None:
        return None
    top = "log(p_max)" if source == SOURCES[0] else "max(logit / temperature)"
    rows = (f"of {PROBES[0]}", "of the same row shifted down by 10", "of [50, 0, ...], whose top token has p = 1")
    seen = "; ".join(f"{_kept(row, source)} {said}" for row, said in zip(PROBES, rows))
    return (
        f"row {i} ({_describe(req)}): min_p's cut came out at log(min_p) * {top}, a product of logs. On rows of its "
        f"own at temperature 1 with min_p 0.1 your function {seen}: its cut moves with the row's own max as "
        f"log(min_p) * {top} does, where the right cut is max + log(min_p), the same distance below the max in "
        "every row",
        f"the cut multiplies two logs, log(min_p) * {top}: {WHY[source]}, and it moves the wrong way with the "
        "row's own max. log(min_p * p_max) is a SUM, log(min_p) + log(p_max): keep logp >= math.log(min_p) + "
        "logp.max() (logp = log_softmax(row / temperature)), or logit / temperature >= max(logit / temperature) + "
        "math.log(min_p)",
    )


WHY = {
    SOURCES[0]: "both are <= 0, so the product is >= 0 and lies above every token unless p_max is 1",
    SOURCES[1]: "a large max puts the cut far below every token, a negative max puts it above every token",
}
