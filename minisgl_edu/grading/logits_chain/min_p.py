"""Exercise 7, stretch — min_p, which the engine does not have (score line "logits_chain_min_p").

The same function as the base part, `process_logits(logits, reqs)`, with a fifth link after the
mask: in a row that samples and has `min_p > 0`, a token whose probability (at the row's
temperature, after the other links) is below min_p times the most likely token's becomes -inf.
The grader's reference is `reference_chain` (chain.py): the package's chain, then `_min_p`. The
cases build batches by hand as the base part's do, and name the known mistake a wrong row shows.

Graded on its own score line, so the base exercise's score is unchanged.
"""

from __future__ import annotations

from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.logits_chain.base import _rows, package_helpers
from minisgl_edu.grading.logits_chain.chain import (
    BIAS_MISTAKES,
    MASK_MISTAKES,
    MIN_P_MISTAKES,
    _check,
    _grammar,
    _req,
    reference_chain,
)
from minisgl_edu.grading.logits_chain.scenes import chain_case

# Kept: p >= min_p * p_max, i.e. logit >= top logit + temperature * ln(min_p).

MIN_P_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]


def case_min_p_relative(fn):
    # At temperature 1 with min_p 0.1 the threshold is 4 - 2.30 = 1.70: tokens 0, 1, 2 stay. Token 2's
    # probability is about 0.09, below 0.1: an absolute threshold drops it.
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=1.0, min_p=0.1), _req(temperature=1.0, min_p=0.3)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


def case_min_p_temperature(fn):
    # Row 0, min_p 0.1 at T = 0.5: the threshold is 4 - 1.15, only token 0 stays (at temperature 1,
    # tokens 1 and 2 would stay too). Row 1, min_p 0.2 at T = 2: the threshold is 4 - 3.22, tokens 0,
    # 1, 2, 3 and 9 stay (at temperature 1, only token 0).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=0.5, min_p=0.1), _req(temperature=2.0, min_p=0.2)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


def case_min_p_after_the_links(fn):
    # Token 0, the model's favourite, is banned by a bias (row 0) and forbidden by the grammar (row 1):
    # min_p's top token is the best of what is left. Row 0 keeps 1, 2, 3 and 9 (above 2.2 - 1.39);
    # row 1's grammar allows 4, 5, 6 and 8, of which 8 and 4 stay (above 0.5 - 0.69).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [
        _req(temperature=1.0, min_p=0.25, logit_bias={0: -100.0}),
        _req(temperature=1.0, min_p=0.5, grammar=_grammar()),
    ]
    _check(fn, logits, reqs, MIN_P_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES, min_p=True)


def case_min_p_greedy(fn):
    # No logit of exactly 0 here: dividing by a temperature of 0 gives +-inf, not NaN, so a filter
    # that forgot the greedy rows visibly drops tokens. Row 2 has a temperature but top_k 1: the
    # sampler takes its argmax (sampling_params.is_greedy), so it is greedy too.
    row = [4.0, 2.2, 1.95, 1.0, 0.3, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]
    logits = _rows(row, row, row)
    reqs = [_req(min_p=0.2), _req(min_p=0.0, temperature=1.0), _req(min_p=0.2, temperature=0.8, top_k=1)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


def case_min_p_boundary(fn):
    # min_p 1: the threshold is the top probability itself. Tokens tied for the top have exactly that
    # probability, so they stay (row 0: tokens 1 and 4; row 1, after a bias of 0.5 on token 3: tokens
    # 2 and 3); every other token goes. Row 2, min_p 0.5 with no token at its threshold, keeps 1, 3, 4.
    row = [0.5, 3.0, 1.0, 2.5, 3.0, -1.0, 0.0, 2.0, 1.5, -0.5, 0.25, 1.75]
    logits = _rows(row, row, row)
    reqs = [
        _req(temperature=1.0, min_p=1.0),
        _req(temperature=0.7, min_p=1.0, logit_bias={2: 2.0, 3: 0.5}),
        _req(temperature=1.0, min_p=0.5),
    ]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


CASES = [
    Case(
        "stretch: min_p is relative to the most likely token",
        case_min_p_relative,
        "keep a token when p >= min_p * max(p); -inf for the others",
    ),
    Case(
        "stretch: min_p at the row's temperature",
        case_min_p_temperature,
        "p = softmax(logits / temperature), the distribution the sampler draws from",
    ),
    Case(
        "stretch: min_p after the other links",
        case_min_p_after_the_links,
        "min_p is the last link: decide on the logits after the bias and the mask",
    ),
    Case(
        "stretch: min_p leaves greedy rows alone",
        case_min_p_greedy,
        "only rows that sample (not sampling_params.is_greedy) with min_p > 0",
    ),
    Case(
        "stretch: a token exactly at the threshold stays",
        case_min_p_boundary,
        "keep p >= min_p * max(p), the tokens exactly at the threshold too: with min_p 1 that is every token tied "
        "for the top, and with no token at the threshold only the ones below it go",
    ),
    chain_case(reference_chain, stretch=True),
]
SYMBOL = "process_logits"
SOLUTION = reference_chain
REFERENCES = [package_chain, *package_helpers()]
