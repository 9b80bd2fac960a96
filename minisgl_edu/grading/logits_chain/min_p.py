"""Exercise 7, stretch — min_p, which the engine does not have (score line "logits_chain_min_p").

The same function as the base part, `process_logits(logits, reqs)`, with a fifth link after the
mask: in a row that samples and has `min_p > 0`, a token whose probability (at the row's
temperature, after the other links) is below min_p times the most likely token's becomes -inf.
The grader's reference is `reference_chain` (chain.py): the package's chain, then `_min_p`. The
cases build batches by hand as the base part's do, and name the known mistake a wrong row shows.
Before that, `_check_min_p` looks for an answer whose min_p never reaches what it returns (it
copies the batch, so min_p counts as a link, yet every row comes back without min_p's cut): that
is a mistake of how the cut is written, not of the shortcut, and is said as such, unless the cut
lands once one setting of the row is taken away (readings.py: then min_p skips rows with it). Before
both, probabilities formed with an exp that overflows on large logits are named (overflow.py).
Only an answer whose min_p counts as a link is told so: on a batch of one min_p row it does not
hand back the tensor it was given, as it was. Whatever a batch shows, min_p read from the request
instead of its sampling params is asked first (min_p_source.py).

Graded on its own score line, so the base exercise's score is unchanged.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.logits_chain.base import _rows, package_helpers
from minisgl_edu.grading.logits_chain.chain import (
    BIAS_MISTAKES,
    MASK_MISTAKES,
    MIN_P_MISTAKES,
    _call,
    _close,
    _close_all,
    _describe,
    _first_difference,
    _grammar,
    _req,
    reference_chain,
)
from minisgl_edu.grading.logits_chain.check import check_rows
from minisgl_edu.grading.logits_chain.min_p_source import min_p_on_the_request
from minisgl_edu.grading.logits_chain.overflow import overflow_in_batch
from minisgl_edu.grading.logits_chain.readings import _what_makes_it_skip, min_p_skipped
from minisgl_edu.grading.logits_chain.scenes import chain_case

MIN_P_NOT_WRITTEN = (
    "your function copies the logits and runs its chain for this batch (min_p counts as a link), yet no row "
    "came back with min_p's cut: every row is the chain without min_p, here and with a row that has a "
    "repetition penalty added to the batch. Wherever min_p's cut is computed, its -inf never reaches the "
    "tensor you return"
)
MIN_P_NOT_WRITTEN_HINT = (
    "write min_p's cut into the tensor you return: row.masked_fill_(mask, -inf) or row[mask] = -inf on a row "
    "of that tensor (masked_fill without the underscore returns a new tensor and leaves the row as it was, and "
    "so does a cut made on a copy of the row)"
)


def _min_p_is_a_link(fn) -> bool:
    """On a batch of one row whose only link is min_p, the answer does not hand back the very tensor it was
    given, as it was: its shortcut takes min_p for a link."""
    logits = _rows(MIN_P_ROW)
    given = logits.clone()
    try:
        out = fn(given, [_req(temperature=1.0, min_p=0.1)])
    except Exception:
        return False
    same = isinstance(out, torch.Tensor) and out.data_ptr() == given.data_ptr()
    return not (same and torch.equal(given, logits))


def _cut_never_lands(fn, logits: torch.Tensor, reqs: list[Req]) -> bool:
    """min_p counts as a link, yet its cut never reaches the tensor returned: on this batch the answer
    hands back a copy (not the very tensor it was given, as a shortcut that skips min_p does), and both
    here and with a row that has a repetition penalty added, every row is the chain without min_p,
    where min_p drops a token in some row."""
    without = package_chain(logits.clone(), reqs).float()
    if _close_all(reference_chain(logits.clone(), reqs).float(), without):
        return False  # min_p drops nothing here: nothing to tell
    given = logits.clone()
    more, extra = torch.cat([logits, logits[:1]]), _req((1,), (), repetition_penalty=2.0)
    try:
        out = fn(given, reqs)
        if not isinstance(out, torch.Tensor) or out.shape != given.shape or out.data_ptr() == given.data_ptr():
            return False
        again = _call(fn, more, reqs + [extra])[: len(reqs)]
    except Exception:
        return False  # (check_rows says what is wrong)
    never = _close_all(out.detach().float(), without) and _close_all(
        again, package_chain(more.clone(), reqs + [extra]).float()[: len(reqs)]
    )
    return never and _min_p_is_a_link(fn)  # a shortcut that skips min_p is not a cut that never lands


def _check_min_p(fn, logits: torch.Tensor, reqs: list[Req], mistakes: list[str]) -> None:
    """`_check_rows_min_p`; when it finds a mistake, min_p read from the request explains it first."""
    try:
        _check_rows_min_p(fn, logits, reqs, mistakes)
    except Mistake as found:
        on_request = min_p_on_the_request(fn, str(found))
        if on_request is None:
            raise
        raise Mistake(*on_request) from None


def _check_rows_min_p(fn, logits: torch.Tensor, reqs: list[Req], mistakes: list[str]) -> None:
    """`check_rows` with min_p, after telling apart probabilities whose exp overflowed (overflow.py) and a min_p
    whose cut never lands on the tensor returned."""
    overflow = overflow_in_batch(fn, logits, reqs)
    if overflow is not None:
        raise Mistake(*overflow)
    if _cut_never_lands(fn, logits, reqs):
        got, want = _call(fn, logits, reqs), reference_chain(logits.clone(), reqs).float()
        i = next(i for i in range(len(reqs)) if not _close(got[i], want[i]))
        skipped = (
            min_p_skipped(fn, i, got, want, logits, reqs, True) if _what_makes_it_skip(fn, i, logits, reqs) else None
        )
        if skipped is not None:  # the cut lands once a setting of the row is taken away: min_p skips such rows
            raise Mistake(*skipped)
        detail = _first_difference(got[i], want[i], logits[i])
        raise Mistake(f"row {i} ({_describe(reqs[i])}): {MIN_P_NOT_WRITTEN} ({detail})", MIN_P_NOT_WRITTEN_HINT)
    check_rows(fn, logits, reqs, mistakes, min_p=True)


# Kept: p >= min_p * p_max, i.e. logit >= top logit + temperature * ln(min_p).

MIN_P_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]


def case_min_p_relative(fn):
    # At temperature 1 with min_p 0.1 the threshold is 4 - 2.30 = 1.70: tokens 0, 1, 2 stay. Token 2's
    # probability is about 0.09, below 0.1: an absolute threshold drops it. Row 2 samples and sets no
    # min_p: it comes back as the model gave it, whatever the rows above it asked for.
    logits = _rows(MIN_P_ROW, MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=1.0, min_p=0.1), _req(temperature=1.0, min_p=0.3), _req(temperature=1.0)]
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES)


def case_min_p_temperature(fn):
    # Row 0, min_p 0.1 at T = 0.5: the threshold is 4 - 1.15, only token 0 stays (at temperature 1,
    # tokens 1 and 2 would stay too). Row 1, min_p 0.2 at T = 2: the threshold is 4 - 3.22, tokens 0,
    # 1, 2, 3 and 9 stay (at temperature 1, only token 0).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=0.5, min_p=0.1), _req(temperature=2.0, min_p=0.2)]
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES)


def case_min_p_after_the_links(fn):
    # Token 0, the model's favourite, is banned by a bias (row 0) and forbidden by the grammar (row 1):
    # min_p's top token is the best of what is left. Row 0 keeps 1, 2, 3 and 9 (above 2.2 - 1.39);
    # row 1's grammar allows 4, 5, 6 and 8, of which 8 and 4 stay (above 0.5 - 0.69).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [
        _req(temperature=1.0, min_p=0.25, logit_bias={0: -100.0}),
        _req(temperature=1.0, min_p=0.5, grammar=_grammar()),
    ]
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES)


def case_min_p_greedy(fn):
    # No logit of exactly 0 here: dividing by a temperature of 0 gives +-inf, not NaN, so a filter
    # that forgot the greedy rows visibly drops tokens. Row 2 has a temperature but top_k 1: the
    # sampler takes its argmax (sampling_params.is_greedy), so it is greedy too.
    row = [4.0, 2.2, 1.95, 1.0, 0.3, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]
    logits = _rows(row, row, row)
    reqs = [_req(min_p=0.2), _req(min_p=0.0, temperature=1.0), _req(min_p=0.2, temperature=0.8, top_k=1)]
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES)


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
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES)


def case_min_p_large_logits(fn):
    # Legal rows whose top logit divided by the temperature is above 88.7, where exp overflows float32: row 0,
    # a bias of +100 (the contract's largest) on tokens 1 and 2, keeps those two (102.2 and 101.95, above
    # 102.2 - 2.30); row 1, logits near 20 at temperature 0.02 (1000 and 999 scaled: float64 overflows too),
    # keeps tokens 0 and 1 (above 1000 - 2.30). Probabilities formed as exp(row / T) / sum are inf / inf = NaN.
    near_20 = [20.0, 19.98, 18.0, 5.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]
    logits = _rows(MIN_P_ROW, near_20)
    reqs = [
        _req(temperature=1.0, min_p=0.1, logit_bias={1: 100.0, 2: 100.0}),
        _req(temperature=0.02, min_p=0.1),
    ]
    _check_min_p(fn, logits, reqs, MIN_P_MISTAKES + BIAS_MISTAKES)


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
    Case(
        "stretch: min_p on large logits (a bias of +100, a low temperature)",
        case_min_p_large_logits,
        "p = softmax(logits / temperature) computed stably (torch.softmax subtracts the max before exp), or the "
        "cut on the logits: logit / temperature >= max(logit / temperature) + math.log(min_p)",
    ),
    chain_case(reference_chain, stretch=True),
]
SYMBOL = "process_logits"
SOLUTION = reference_chain
REFERENCES = [package_chain, *package_helpers()]
