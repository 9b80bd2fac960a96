"""A crash of the answer read as one known mistake, before the error goes on to the student.

Where this sits: bitmask_rows.py's `call_or_name` and `run_or_name` call the answer for every hand
case; when it raises and neither misplaced bitmask rows (bitmask_rows.py) nor a padded mask
(mask_padding.py) explain it, `read_crash` asks seven more questions, each by running the answer
again on inputs of the grader's own (the generated case asks the last three too, scenes.py's `play`):

* the vocabulary read from the rows: `vocab = logits.shape[0]` is the batch size, not the row's length,
  so counts (and a bitmask) sized by it do not fit the row. The answer raises on one row with output
  [1, 1] yet gets a square batch right, V copies of that row, where the two sizes are equal.
* counts shorter than the vocabulary: `torch.bincount(ids)` is only max(ids) + 1 long, so
  subtracting it from a row of `vocab` logits fails unless the output holds the vocabulary's last
  token. The answer raises on a row with output [1, 1] yet gets it right with output [1, 11].
* a property called: `sampling_params.is_greedy` is a bool, and `sp.is_greedy()` calls that bool.
  The answer gets the batch right once is_greedy is a bool that may also be called.
* a float given to torch: the stretch's `sp.min_p` is a Python float, and `torch.log(min_p)` wants a
  tensor. The answer gets the batch right once min_p is a 0-d tensor (which math.log takes too).
* min_p read without its default: SamplingParams has no min_p field, the grader sets it only on the
  requests that use it, so `sp.min_p` raises AttributeError on the others. The answer gets the batch
  right once every request has min_p = 0.0.
* an empty logit_bias indexed with: `torch.tensor(list(sp.logit_bias))` of an empty dict is an empty
  float32 tensor, which cannot index. The answer raises on a row with a repetition penalty and
  logit_bias {}, yet runs on the same row with logit_bias {3: 0.5}.
* per-row penalty values broadcast over the vocabulary (column_values.py): a tensor of one frequency or
  presence penalty per row, shape [N], lines up with the vocabulary. The answer gives row i, token t of a
  square batch (V rows) the penalty of row t.
"""

from __future__ import annotations

import copy
from typing import Callable, Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.logits_chain.chain import V, _call, _close_all, _reference, _req
from minisgl_edu.grading.logits_chain.column_values import values_over_tokens

# --- the vocabulary read from the rows -------------------------------------------------------------


def _square_right(fn: Callable) -> bool:
    """True if the answer gets a batch of V rows right, each the row of `_counts_right` with output [1, 1]:
    logits of shape [V, V], where the batch size and the vocabulary size are the same number."""
    logits = torch.linspace(-1.0, 1.0, V).repeat(V, 1)
    reqs = [_req(output=[1, 1], frequency_penalty=0.5) for _ in range(V)]
    try:
        return _close_all(_call(fn, logits, reqs), _reference(logits, reqs, False))
    except Exception:
        return False


def vocab_from_rows(fn: Callable, what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer raises on a row of its own with frequency_penalty 0.5 and output
    [1, 1], yet gets V copies of that row right (logits [V, V]): it sizes its counts by the number of rows;
    None otherwise. Asked before short_counts, whose probe this answer also trips (one row: vocab 1)."""
    if _counts_right(fn, [1, 1]) is not None or not _square_right(fn):
        return None
    return (
        f"{what}. On a row of its own with frequency_penalty 0.5 and output [1, 1] your function raises, yet "
        f"it gets a batch of {V} copies of that row right (logits of shape [{V}, {V}], as many rows as tokens): "
        "the size you use for the vocabulary is the number of rows. logits is [N, vocab], so logits.shape[0] "
        "is the batch size N",
        "the vocabulary size is the row's length, logits.shape[-1] (or shape[1]), not logits.shape[0], which "
        "counts the rows (the requests): counts and bitmasks sized by it do not fit the row",
    )


# --- counts shorter than the vocabulary -------------------------------------------------------------


def _counts_right(fn: Callable, output: list[int]) -> Optional[bool]:
    """True if the answer gets a row with frequency_penalty 0.5 and this output right, False if it
    gets it wrong, None if it raises."""
    logits = torch.linspace(-1.0, 1.0, V).unsqueeze(0)
    reqs = [_req(output=output, frequency_penalty=0.5)]
    try:
        return _close_all(_call(fn, logits, reqs), _reference(logits, reqs, False))
    except Exception:
        return None


def short_counts(fn: Callable, reqs: list[Req], what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when a batch with frequency or presence penalties raised, and the answer raises on
    output [1, 1] yet gets output [1, V - 1] right (its largest id is the vocabulary's last token, so
    counts of max(ids) + 1 entries have one per token); None otherwise."""
    counted = any(
        r.output_ids and (r.sampling_params.frequency_penalty or r.sampling_params.presence_penalty) for r in reqs
    )
    if not counted or _counts_right(fn, [1, 1]) is not None or not _counts_right(fn, [1, V - 1]):
        return None
    return (
        f"{what}. On a row of its own with frequency_penalty 0.5 your function raises too when the output is "
        f"[1, 1], yet gets the row right when the output is [1, {V - 1}], whose largest id is the vocabulary's last "
        f"token: your counts are max(ids) + 1 long, not one per token of the row's {V}. torch.bincount(ids) "
        "counts only up to the largest id it is given: pass minlength",
        "the counts must have one entry per vocabulary token, as long as the row: torch.bincount(ids, "
        "minlength=vocab) (without minlength they are only max(ids) + 1 long, shorter than the row)",
    )


# --- the batch again, one field changed -----------------------------------------------------------


def _copy_with(req: Req, sp: SamplingParams) -> Req:
    """A copy of `req` with its own token lists (the same grammar) and the sampling params `sp`."""
    new = copy.copy(req)
    new.input_ids, new.output_ids, new.sampling_params = list(req.input_ids), list(req.output_ids), sp
    return new


def _right_with(fn: Callable, logits: torch.Tensor, probe: list[Req], reqs: list[Req], min_p: bool) -> bool:
    """True if the answer, given `probe` (the batch `reqs` with one field changed), gives the reference's
    rows for `reqs`; False if it gives others or raises."""
    try:
        return _close_all(_call(fn, logits, probe), _reference(logits, reqs, min_p))
    except Exception:
        return False


# --- a property called ------------------------------------------------------------------------------


class _Flag:
    """is_greedy's bool that may also be called: `sp.is_greedy` and `sp.is_greedy()` give the same."""

    def __init__(self, value: bool):
        self.value = value

    def __bool__(self) -> bool:
        return self.value

    def __call__(self) -> bool:
        return self.value


class _CallableGreedy(SamplingParams):
    """The same sampling params, whose is_greedy may also be called."""

    @property
    def is_greedy(self) -> _Flag:  # type: ignore[override]
        return _Flag(SamplingParams.is_greedy.fget(self))


def _callable_greedy(req: Req) -> Req:
    """A copy of `req` (its own token lists, the same grammar) with _CallableGreedy sampling params."""
    sp = copy.copy(req.sampling_params)  # (min_p, the stretch's field, is copied with it)
    sp.__class__ = _CallableGreedy
    return _copy_with(req, sp)


def called_property(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, error: Exception, what: str):
    """(message, hint) when the answer raised TypeError on this batch and gets it right once is_greedy
    may also be called; None otherwise."""
    if not isinstance(error, TypeError):
        return None
    if not _right_with(fn, logits, [_callable_greedy(r) for r in reqs], reqs, min_p):
        return None
    return (
        f"{what}. Given sampling params whose is_greedy may also be called, your function gets this batch right: "
        "sampling_params.is_greedy is a property, already a bool (temperature 0, or top_k 1), so sp.is_greedy() "
        "calls that bool",
        "sampling_params.is_greedy is a property, not a method: read it as sp.is_greedy without () (with () "
        "Python calls the bool it gives: 'bool' object is not callable)",
    )


# --- a float given to torch ------------------------------------------------------------------------


def _tensor_min_p(req: Req) -> Req:
    """A copy of `req` whose min_p is a 0-d float32 tensor of the same value (a float for torch.log)."""
    sp = copy.copy(req.sampling_params)
    sp.min_p = torch.tensor(float(req.sampling_params.min_p))
    return _copy_with(req, sp)


def float_to_torch(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, error: Exception, what: str):
    """(message, hint) when a min_p batch raised TypeError or AttributeError and the answer gets it right
    once every min_p is a 0-d tensor instead of a Python float; None otherwise."""
    set_ = [i for i, r in enumerate(reqs) if getattr(r.sampling_params, "min_p", 0.0)]  # (by row: equal Reqs exist)
    if not min_p or not set_ or not isinstance(error, (TypeError, AttributeError)):
        return None
    if not _right_with(fn, logits, [_tensor_min_p(r) if i in set_ else r for i, r in enumerate(reqs)], reqs, min_p):
        return None
    return (
        f"{what}. Given the same min_p as a 0-d tensor, your function gets this batch right: sampling_params.min_p "
        "is a Python float, and torch's functions (torch.log, torch.exp, ...) and tensor methods take tensors",
        "min_p is a Python float, not a tensor: take its log with math.log(min_p) (torch.log(min_p) raises "
        "TypeError on a float)",
    )


# --- min_p read without its default ------------------------------------------------------------------


def _min_p_set(req: Req) -> Req:
    """A copy of `req` whose sampling params have min_p = 0.0 (off), the value getattr's default gives."""
    sp = copy.copy(req.sampling_params)
    sp.min_p = 0.0
    return _copy_with(req, sp)


def min_p_without_default(
    fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, error: Exception, what: str
):
    """(message, hint) when the answer raised AttributeError about min_p on a batch where some request has no
    min_p, and gets the batch right once those requests have min_p = 0.0; None otherwise."""
    bare = [i for i, r in enumerate(reqs) if not hasattr(r.sampling_params, "min_p")]
    if not isinstance(error, AttributeError) or "min_p" not in str(error) or not bare:
        return None
    if not _right_with(fn, logits, [_min_p_set(r) if i in bare else r for i, r in enumerate(reqs)], reqs, min_p):
        return None
    return (
        f"{what}. {'Rows' if len(bare) > 1 else 'Row'} {', '.join(map(str, bare))} {'have' if len(bare) > 1 else 'has'} "
        "no min_p: SamplingParams has no min_p field, the stretch's field is set only on "
        "the requests that use it. Given the same batch with min_p = 0.0 set on those rows, your function gets it "
        "right: sp.min_p raises AttributeError on every request that does not use min_p",
        MIN_P_DEFAULT_HINT,
    )


MIN_P_DEFAULT_HINT = (
    'read min_p with getattr(sp, "min_p", 0.0), not sp.min_p: SamplingParams has no min_p field, only the '
    "requests that use min_p carry one, so a request without it raises AttributeError"
)


# --- an empty logit_bias indexed with -----------------------------------------------------------------


def _raises(fn: Callable, bias: dict[int, float]) -> bool:
    """True if the answer raises on a row of its own with repetition_penalty 1.3 and this logit_bias."""
    try:
        _call(fn, torch.linspace(-1.0, 1.0, V).unsqueeze(0), [_req((1, 2), repetition_penalty=1.3, logit_bias=bias)])
    except Exception:
        return True
    return False


def empty_bias(fn: Callable, what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer raises on a row with a repetition penalty and an empty logit_bias, yet
    runs on the same row with logit_bias {3: 0.5}; None otherwise."""
    if not _raises(fn, {}) or _raises(fn, {3: 0.5}):
        return None
    return (
        f"{what}. On a row of its own with repetition_penalty 1.3, your function raises when its logit_bias is "
        "empty ({}, what every request without a bias has) and runs when it is {3: 0.5}: the empty bias is the "
        "cause. torch.tensor([]) of an empty list is a float32 tensor, and a float tensor cannot index a row",
        "a request without a bias has logit_bias {}, and the ids built from it, torch.tensor([]), are an empty "
        "float32 tensor, which cannot be used as an index: skip an empty bias (if sp.logit_bias: ...), or build "
        "the ids with dtype=torch.long",
    )


def read_crash(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, error: Exception, what: str):
    """(message, hint) for a crash one of the known mistakes above explains; None otherwise."""
    return (
        vocab_from_rows(fn, what)
        or short_counts(fn, reqs, what)
        or called_property(fn, logits, reqs, min_p, error, what)
        or min_p_without_default(fn, logits, reqs, min_p, error, what)
        or float_to_torch(fn, logits, reqs, min_p, error, what)
        or empty_bias(fn, what)
        or values_over_tokens(fn, what)
    )
