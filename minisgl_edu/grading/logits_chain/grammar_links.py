"""Penalties and logit_bias skipped on rows that have a grammar: the answer gives such a row only its
grammar's mask, reasoning that "the grammar decides what may come next".

A grammar only forbids the tokens that would break the format, and it usually allows many (any digit,
any key): among those, the penalties and the bias still decide which one is picked. `check_rows`
(check.py) asks this before the known mistakes, so that such a row is not read as another row's
settings (chain.py's guess when the numbers happen to agree). It is named when row i has a grammar and
a penalty or a bias, comes out as the reference with those links made neutral (the mask alone, and min_p
where the stretch asks for it), and the answer does the same on a probe of the grader's own: a row whose
grammar allows 'a', 'b' and 'c', with a frequency penalty and a bias on allowed tokens, gets the same
links skipped, while the same row without the grammar comes out right (so the links themselves work).
"""

from __future__ import annotations

import copy
from typing import Optional

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    _call,
    _close,
    _describe,
    _first_difference,
    _grammar,
    _random,
    _reference,
    _req,
)

PENALTIES = "the penalties"
BIAS = "the logit_bias"
# What the answer may have left out on a grammar row: both links, or one of them.
SKIPS = ((PENALTIES, BIAS), (PENALTIES,), (BIAS,))


def _without(req: Req, skipped: tuple[str, ...], grammar=None) -> Req:
    """`req` with the links `skipped` made neutral (its grammar kept, or `grammar` given instead)."""
    sp = copy.copy(req.sampling_params)
    if PENALTIES in skipped:
        sp.repetition_penalty, sp.frequency_penalty, sp.presence_penalty = 1.0, 0.0, 0.0
    if BIAS in skipped:
        sp.logit_bias = {}
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=grammar or req.grammar)


def _asks_for(req: Req, skipped: tuple[str, ...]) -> bool:
    sp = req.sampling_params
    return (PENALTIES not in skipped or sp.has_penalties) and (BIAS not in skipped or bool(sp.logit_bias))


def skipped_on_probe(fn, min_p: bool) -> Optional[tuple[str, ...]]:
    """The links (one of SKIPS) the answer leaves out on a row with a grammar, on a batch of the grader's own
    where it gets the same request right on the row beside it, which has no grammar; None otherwise."""
    logits = _random(2, 46)
    made = dict(frequency_penalty=2.0, logit_bias={2: 1.5, 3: -1.0})
    grammar_row = _req((4,), (1, 1), grammar=_grammar("[abc]+", accepted=(1, 1)), **made)
    reqs = [grammar_row, _req((4,), (1, 1), **made)]
    try:
        got = _call(fn, logits, reqs)
    except Exception:
        return None
    want = _reference(logits, reqs, min_p)
    if not _close(got[1], want[1]) or _close(got[0], want[0]):
        return None
    for skipped in SKIPS:
        if _close(got[0], _reference(logits[:1], [_without(grammar_row, skipped)], min_p)[0]):
            return skipped
    return None


def grammar_links_skipped(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Optional[tuple]:
    """(message, hint) when row i has a grammar, came out with its penalties and/or logit_bias left out,
    and the answer leaves out the same links on the grader's probe; None otherwise."""
    req = reqs[i]
    if req.grammar is None:
        return None
    matches = []  # the links whose absence gives row i exactly
    for skipped in SKIPS:
        if _asks_for(req, skipped):
            neutral = _reference(logits[i : i + 1], [_without(req, skipped)], min_p)[0]
            if _close(got[i], neutral) and not _close(neutral, want[i]):
                matches.append(skipped)
    shown = skipped_on_probe(fn, min_p) if matches else None
    here = tuple(link for link in shown or () if _asks_for(req, (link,)))  # those row i asks for
    if here not in matches:
        return None
    what, probed = " and ".join(here), " and ".join(shown)
    return (
        f"row {i} ({_describe(req)}): this row has a grammar, and it came out with only its grammar's mask, "
        f"without {what} ({_first_difference(got[i], want[i], logits[i])}). On a row of the grader's own (a "
        "grammar that allows 'a', 'b' and 'c', a frequency penalty and a logit_bias on those tokens) your answer "
        f"leaves out {probed} too, and gets the same row right without the grammar",
        f"a row with a grammar still gets {probed}: the mask only sets the tokens the grammar forbids to -inf, "
        "and among the tokens it allows the penalties and the bias still decide. Apply every link the request "
        "asks for, then the mask",
    )
