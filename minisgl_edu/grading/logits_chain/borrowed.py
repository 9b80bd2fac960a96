"""A setting of one request used for every row of the batch: the answer read, say, the temperature
or the repetition penalty from reqs[0] (or another fixed request) instead of from each row's own.

`check_rows` (check.py) asks this before the known mistakes: a wrong row that another explanation
also gives (a min_p threshold from the batch's top can drop the same tokens as a threshold at
another row's temperature) is named as a borrowed setting only when that explains EVERY row of the
batch, each row recomputed by the reference with that one setting taken from the same request, and
row i comes back the same when the other rows' logits are flat (the setting, not those logits, moved it).
"""

from __future__ import annotations

import copy

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close, _describe, _first_difference, _reference
from minisgl_edu.grading.logits_chain.mistakes import OWN_VALUES

SETTINGS = (
    "temperature",
    "min_p",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "top_k",
    "top_p",
)


def _with(req: Req, name: str, value) -> Req:
    """`req` with its sampling_params' setting `name` set to `value`; `req` itself when that would make a
    greedy row sample or a sampling row greedy (the answer decides greedy rows by their own request)."""
    sp = copy.copy(req.sampling_params)
    setattr(sp, name, copy.copy(value))
    if sp.is_greedy != req.sampling_params.is_greedy:
        return req
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=req.grammar)


def borrowed_setting(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when the whole batch is the reference's with one setting of request j used for
    every row, and row i is wrong because of it; None otherwise."""
    names = SETTINGS if min_p else tuple(s for s in SETTINGS if s != "min_p")
    for name in names:
        own = getattr(reqs[i].sampling_params, name, None)
        for j, other in enumerate(reqs):
            value = getattr(other.sampling_params, name, None)
            if j == i or value is None or own is None or value == own:
                continue
            if _explains_batch(got, logits, reqs, name, value, min_p) and _only_settings_matter(
                fn, i, got, logits, reqs
            ):
                return _named(i, j, name, own, value, got, want, logits, reqs)
    return None


def _explains_batch(got: torch.Tensor, logits, reqs: list[Req], name: str, value, min_p: bool) -> bool:
    for k, req in enumerate(reqs):
        variant = _with(req, name, value)
        if not _close(got[k], _reference(logits[k : k + 1], [variant], min_p)[0]):
            return False
    return True


def _only_settings_matter(fn, i: int, got: torch.Tensor, logits, reqs: list[Req]) -> bool:
    """Whether row i comes back the same when every other row's logits are flat (all 0): a setting read from
    another request does not depend on that request's logits, a threshold from the batch's top does."""
    flat = torch.zeros_like(logits)
    flat[i] = logits[i]
    try:
        return _close(_call(fn, flat, reqs)[i], got[i])
    except Exception:
        return False


def _named(i: int, j: int, name: str, own, value, got, want, logits, reqs: list[Req]) -> tuple[str, str]:
    detail = _first_difference(got[i], want[i], logits[i])
    return (
        f"row {i} ({_describe(reqs[i])}): this row used {name} {value!r}, the value of row {j}'s request, not its "
        f"own {name} {own!r}: every row of the batch comes out as if {name} were read from reqs[{j}] ({detail})",
        f"the {name} of one request was used for every row: read it from reqs[i].sampling_params.{name} for row "
        f"i ({OWN_VALUES})",
    )
