"""The "nothing to do" shortcut of a wrong answer, found by running it again on a changed batch.

An answer that returns the logits untouched when it thinks no link applies is wrong when its test
forgets a link. When a whole batch comes back as the model gave it, `check_rows` (check.py) asks here:

- `_forgot_bias_in_the_shortcut`: with one more row that has a repetition penalty, the answer adds
  the bias right, so its shortcut does not look at logit_bias.
- `_shortcut_reads_the_first_request`: with the row that needs a link moved to the front, the
  answer gets every row right, so its shortcut looks at reqs[0] alone.
- `_forgot_penalties_in_the_shortcut`: in a batch whose only links are penalties (a presence penalty
  alone, say), with one more row that has another link the answer gets every row right, so its shortcut
  does not count those penalties; the hint names them.

- `skips_row_zero`: only row 0 uses a link, and on the grader's own pair of rows the answer leaves a
  penalised row 0 alone but penalises the same row at row 1: its shortcut tests the row numbers of the
  rows that need a link (`any([0])` is False), not the rows. The generated case's hint asks it too.

`shortcut_mistake` returns the failure's message and hint for the first of these that holds.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import (
    V,
    _call,
    _close_all,
    _describe,
    _first_difference,
    _min_p_of,
    _reference,
    _req,
    _uses_chain,
)

BIAS_SHORTCUT = (
    "the whole batch came back as the model gave it, yet this row's request asks for a logit_bias; with one more "
    "row that has a repetition penalty, your answer adds the bias right. So the shortcut that returns the logits "
    "untouched when no penalty or grammar applies does not look at logit_bias: a bias is a link too"
)
BIAS_SHORTCUT_HINT = (
    "a batch where logit_bias is the only link still needs the chain: count a non-empty logit_bias in the shortcut"
)


def _forgot_bias_in_the_shortcut(fn, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """Whether the answer gets every row of the batch right once a row with a repetition penalty joins it:
    then only its shortcut (nothing to do, return the logits as they are) skipped the bias."""
    if not any(r.sampling_params.logit_bias for r in reqs):
        return False
    more, extra = torch.cat([logits, logits[:1]]), _req((1,), (), repetition_penalty=2.0)
    try:
        got = _call(fn, more, reqs + [extra])
    except Exception:
        return False
    return _close_all(got[: len(reqs)], _reference(more, reqs + [extra], min_p)[: len(reqs)])


FIRST_ONLY_SHORTCUT = (
    "the whole batch came back as the model gave it, yet this row's request uses a link; with this request moved "
    "to the front of the batch your answer gets every row right. So the shortcut that returns the logits untouched "
    "decides on reqs[0] alone: when the first request needs nothing, the rows after it lose their links too"
)
FIRST_ONLY_HINT = (
    "return the logits untouched only when no request of the batch needs a link: test every request "
    "(any(... for req in reqs)), not reqs[0]"
)


def _shortcut_reads_the_first_request(fn, i: int, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """Row i uses a link and reqs[0] none, and the answer gets every row right once row i is moved to
    the front: only a shortcut that looks at the first request returns such a batch untouched."""
    if i == 0 or _uses_chain(reqs[0]) or not _uses_chain(reqs[i]):
        return False
    order = [i] + [j for j in range(len(reqs)) if j != i]
    moved, moved_reqs = logits[order], [reqs[j] for j in order]
    try:
        got = _call(fn, moved, moved_reqs)
    except Exception:
        return False
    return _close_all(got, _reference(moved, moved_reqs, min_p))


EVERY_ROW_SHORTCUT = (
    "the whole batch came back as the model gave it, yet this row's request uses a link; with the rows that "
    "need no link left out your answer gets every row right, and a batch of one row with a repetition penalty "
    "beside a plain row comes back untouched too. So the shortcut that returns the logits untouched is taken "
    "whenever some request needs nothing: it asks whether every request needs a link (all), not whether any does"
)
EVERY_ROW_HINT = (
    "return the logits untouched only when no request needs a link: `if not any(uses_chain(r) for r in reqs)`, "
    "not `if not all(...)`: one request with nothing to do must not skip the others"
)


def _shortcut_needs_every_row(fn, i: int, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """Row i uses a link, some row uses none, and the answer gets every row right once the rows without a
    link are left out; confirmed on a batch of the grader's own ([a plain row, a row with a repetition
    penalty], and the reverse order) that comes back untouched."""
    linked = [j for j in range(len(reqs)) if _uses_chain(reqs[j])]
    if i not in linked or len(linked) == len(reqs):
        return False
    try:
        got = _call(fn, logits[linked], [reqs[j] for j in linked])
        if not _close_all(got, _reference(logits[linked], [reqs[j] for j in linked], min_p)):
            return False
        rows = torch.linspace(-1.0, 1.0, V).repeat(2, 1)
        plain, penalised = _req((1,), ()), _req((0, 1), (), repetition_penalty=2.0)
        return all(_close_all(_call(fn, rows, pair), rows) for pair in ([plain, penalised], [penalised, plain]))
    except Exception:
        return False


ROW_ZERO_SHORTCUT = (
    "the whole batch came back as the model gave it, yet row 0 uses a link; the same penalised row is penalised "
    "right at row 1 of a batch, but left alone at row 0. So the shortcut tests the row numbers of the rows that "
    "need a link, and row 0 is falsy: any([0]) is False"
)
ROW_ZERO_HINT = (
    "row 0 is falsy: `any(touched)` over a list of row numbers is False when only row 0 needs a link. Test the "
    "requests themselves (`if not any(uses_chain(r) for r in reqs)`) or the list's length (`if not touched`)"
)


def skips_row_zero(fn, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """The batch came back untouched, only row 0 uses a link, and on the grader's own pair of rows the
    answer leaves [a penalised row, a plain row] as it was but gets [the plain row, the penalised row]
    right: only row 0's place makes it take the shortcut."""
    if fn is None or not _close_all(got, logits.float()) or not _uses_chain(reqs[0]):
        return False
    if any(_uses_chain(r) for r in reqs[1:]):
        return False
    rows = torch.linspace(-1.0, 1.0, V).repeat(2, 1)
    plain, penalised = _req((1,), ()), _req((0, 1), (), repetition_penalty=2.0)
    try:
        first, behind = _call(fn, rows, [penalised, plain]), _call(fn, rows, [plain, penalised])
    except Exception:
        return False
    return _close_all(first, rows) and _close_all(behind, _reference(rows, [plain, penalised], min_p))


PENALTY_NAMES = {
    "repetition_penalty": lambda sp: sp.repetition_penalty != 1.0,
    "frequency_penalty": lambda sp: sp.frequency_penalty != 0.0,
    "presence_penalty": lambda sp: sp.presence_penalty != 0.0,
}


def _penalties_used(reqs: list[Req]) -> list[str]:
    """The penalties some request of the batch sets and that change its row (seen tokens to act on)."""
    used = []
    for name, set_ in PENALTY_NAMES.items():
        tokens = (lambda r: r.input_ids or r.output_ids) if name == "repetition_penalty" else (lambda r: r.output_ids)
        if any(set_(r.sampling_params) and tokens(r) for r in reqs):
            used.append(name)
    return used


def _right_beside(fn, logits: torch.Tensor, reqs: list[Req], extra: Req, min_p: bool) -> bool:
    """Whether the answer gets every row of the batch right once the row `extra` joins it."""
    more = torch.cat([logits, logits[:1]])
    try:
        got = _call(fn, more, reqs + [extra])
    except Exception:
        return False
    return _close_all(got[: len(reqs)], _reference(more, reqs + [extra], min_p)[: len(reqs)])


def _forgot_penalties_in_the_shortcut(fn, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> Optional[list]:
    """The penalties the answer's shortcut does not count, when the batch's only links are penalties set at or
    above neutral, and the answer gets every row right once a row with another link joins it; else None. A
    penalty below neutral skipped is a class of its own (neutral.py; mutant "shortcut misses penalties below
    neutral"): such batches are left to it."""
    if any(r.grammar is not None or r.sampling_params.logit_bias or _min_p_of(r.sampling_params) for r in reqs):
        return None  # the other links have shortcut diagnoses of their own
    sp_all = [r.sampling_params for r in reqs]
    if any(sp.repetition_penalty < 1.0 or sp.frequency_penalty < 0.0 or sp.presence_penalty < 0.0 for sp in sp_all):
        return None
    names = _penalties_used(reqs)
    if not names:
        return None
    extra = (
        _req((1,), (), logit_bias={1: 1.0}) if "repetition_penalty" in names else _req((1,), (), repetition_penalty=2.0)
    )
    return names if _right_beside(fn, logits, reqs, extra, min_p) else None


def _penalty_shortcut(where: str, names: list[str], extra: str, detail: str) -> tuple[str, str]:
    listed = " and ".join(names)
    return (
        f"{where}: the whole batch came back as the model gave it, yet its requests set {listed}; with one more "
        f"row that has {extra}, your answer gets every row right. So the shortcut that returns the logits untouched "
        f"when no link applies does not count {listed}: each penalty is a link of its own ({detail})",
        f"a batch whose only link is {listed} still needs the chain: count {listed} in the shortcut "
        "(each penalty against its neutral value, as the other links)",
    )


def shortcut_mistake(
    fn, i: int, got, want, logits: torch.Tensor, reqs: list[Req], min_p: bool
) -> Optional[tuple[str, str]]:
    """(message, hint) when the batch came back untouched because of the answer's shortcut; None otherwise."""
    where = f"row {i} ({_describe(reqs[i])})"
    if skips_row_zero(fn, got, logits, reqs, min_p):
        return f"{where}: {ROW_ZERO_SHORTCUT} ({_first_difference(got[i], want[i], logits[i])})", ROW_ZERO_HINT
    if reqs[i].sampling_params.logit_bias and _forgot_bias_in_the_shortcut(fn, logits, reqs, min_p):
        detail = _first_difference(got[i], want[i], logits[i])
        return f"{where}: {BIAS_SHORTCUT} ({detail})", BIAS_SHORTCUT_HINT
    if _shortcut_reads_the_first_request(fn, i, logits, reqs, min_p):
        detail = _first_difference(got[i], want[i], logits[i])
        return f"{where}: {FIRST_ONLY_SHORTCUT} ({detail})", FIRST_ONLY_HINT
    if _shortcut_needs_every_row(fn, i, logits, reqs, min_p):
        detail = _first_difference(got[i], want[i], logits[i])
        return f"{where}: {EVERY_ROW_SHORTCUT} ({detail})", EVERY_ROW_HINT
    missed = _forgot_penalties_in_the_shortcut(fn, logits, reqs, min_p)
    if missed is not None:
        extra = "a logit_bias" if "repetition_penalty" in missed else "a repetition penalty"
        return _penalty_shortcut(where, missed, extra, _first_difference(got[i], want[i], logits[i]))
    return None
