"""Grading the logits chain, step 3: one batch of the answer checked row by row against the reference.

Where this sits: every hand case of logits_chain and its min_p stretch (base.py, min_p.py) builds a
batch and calls `check_rows`. The first wrong row raises a `Mistake` whose hint is found, in this
order, by: a crash read as misplaced bitmask rows (bitmask_rows.py), a shortcut that skipped the
whole batch (shortcuts.py), a known mistake played by the reference (chain.py's `_explain_row`,
mistakes.py), or a reading of what the difference itself is (readings.py). It sits above all of
those modules, so none of them imports it.
"""

from __future__ import annotations

from typing import Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.logits_chain.argmax_cut import cut_at_the_argmax
from minisgl_edu.grading.logits_chain.bias_pairs import swapped_bias
from minisgl_edu.grading.logits_chain.bitmask_rows import call_or_name
from minisgl_edu.grading.logits_chain.borrowed import borrowed_setting
from minisgl_edu.grading.logits_chain.boundary import boundary_as_off
from minisgl_edu.grading.logits_chain.carried_min_p import carried_min_p
from minisgl_edu.grading.logits_chain.carried_tokens import carried_tokens
from minisgl_edu.grading.logits_chain.chain import (
    BATCH_MISTAKES,
    MIN_P_SHORTCUT_HINT,
    _call,
    _close,
    _close_all,
    _describe,
    _explain_row,
    _first_difference,
    _reference,
)
from minisgl_edu.grading.logits_chain.copy_per_row import copy_per_row
from minisgl_edu.grading.logits_chain.copy_writes import copy_write_mistake
from minisgl_edu.grading.logits_chain.grammar_links import grammar_links_skipped
from minisgl_edu.grading.logits_chain.kept_state import kept_between_calls
from minisgl_edu.grading.logits_chain.late_binding import last_request_links
from minisgl_edu.grading.logits_chain.log_product import multiplied_logs
from minisgl_edu.grading.logits_chain.lost_links import _sampling, lost_links
from minisgl_edu.grading.logits_chain.mask_product import mask_times_inf
from minisgl_edu.grading.logits_chain.min_p_axis import over_the_batch, shortcut_confirmed
from minisgl_edu.grading.logits_chain.mistakes import MASK, MISTAKES, OWN_VALUES
from minisgl_edu.grading.logits_chain.neutral import below_neutral_skipped
from minisgl_edu.grading.logits_chain.readings import read_difference
from minisgl_edu.grading.logits_chain.repeated_index import INDEXED_WRITE, writes_repeated_outputs
from minisgl_edu.grading.logits_chain.shortcuts import shortcut_mistake
from minisgl_edu.grading.logits_chain.threshold import THRESHOLD
from minisgl_edu.grading.logits_chain.uid_rows import rows_by_uid
from minisgl_edu.grading.logits_chain.undone_penalty import shows_on_probe
from minisgl_edu.grading.logits_chain.word_bits import read_by_word
from minisgl_edu.grading.logits_chain.zeroed_rows import zeroed_row


def check_rows(fn, logits: torch.Tensor, reqs: list[Req], mistakes: list[str], min_p: bool = False) -> None:
    """Every row of the answer against the reference; the first wrong row raises a Mistake that names, in this order,
    a grammar's mask multiplied by -inf, which makes NaN of 0 * -inf (mask_product.py), rows taken by the request's
    uid, not its place in the batch (uid_rows.py), a row that asks for nothing left at zero (zeroed_rows.py), state
    kept from an earlier call for the same request (kept_state.py), seen tokens carried over from other rows and
    calls (carried_tokens.py), min_p's probabilities taken across the batch (min_p_axis.py), a shortcut that
    skipped the batch (shortcuts.py; min_p's shortcut is confirmed by min_p_axis.py), min_p 1 taken for "off"
    (boundary.py), an earlier row's min_p carried to a row without one (carried_min_p.py), every row given the last
    request's links by closures called after the loop (late_binding.py), every row but the last lost to a copy made
    inside the loop (copy_per_row.py), one request's setting used for every row (borrowed.py), a penalty below
    neutral skipped (neutral.py), a link written into a copy made by indexing (copy_writes.py), the penalties or
    bias left out on a row with a grammar (grammar_links.py), a logit_bias's amounts put on other ids of it
    (bias_pairs.py), min_p's cut a product of logs (log_product.py), a known mistake (mistakes.py; a skipped mask confirmed as one read per word by
    word_bits.py, a min_p cut of the wrong size as one at argmax()'s index by argmax_cut.py), changes that never
    reached the returned tensor (lost_links.py), or what the difference is (readings.py). Another row's values are
    blamed (chain.py) only when the row is right on its own. A crash is first read by bitmask_rows.py."""
    got = call_or_name(fn, logits, reqs, min_p)
    want = _reference(logits, reqs, min_p)
    unchanged = _close_all(got, logits.float())
    for i in range(len(reqs)):
        if not _close(got[i], want[i]):
            product = mask_times_inf(i, got, reqs, f"row {i} ({_describe(reqs[i])})")  # 0 * -inf is NaN
            if product is not None:
                raise Mistake(*product)
            by_uid = rows_by_uid(fn, i, got, want, logits, reqs, min_p)  # out[req.uid] taken for out[i]
            if by_uid is not None:
                raise Mistake(*by_uid)
            zeroed = zeroed_row(fn, i, got, want, logits, reqs)  # a plain row never copied into a result of zeros
            if zeroed is not None:
                raise Mistake(*zeroed)
            # right once the requests are new to it, or seen tokens shared by rows and calls
            kept = kept_between_calls(fn, i, got, want, logits, reqs) or carried_tokens(fn, i, got, want, logits, reqs)
            if kept is not None:
                raise Mistake(*kept)
            axis = over_the_batch(fn, i, got, want, logits, reqs, min_p)
            if axis is not None:
                raise Mistake(*axis)
            shortcut = shortcut_mistake(fn, i, got, want, logits, reqs, min_p) if unchanged else None
            if shortcut is not None:
                raise Mistake(*shortcut)
            edge = boundary_as_off(fn, i, got, want, logits, reqs, min_p)  # min_p 1 skipped as if it were off
            if edge is not None:
                raise Mistake(*edge)
            carried = carried_min_p(fn, i, got, logits, reqs) if min_p else None  # an earlier row's min_p
            if carried is not None:
                raise Mistake(*carried)
            alone = _right_alone(fn, i, logits, reqs, want) if len(reqs) > 1 else None  # None: nothing beside it
            late = last_request_links(fn, i, got, want, logits, reqs, min_p) if alone else None  # closures
            if late is not None:
                raise Mistake(*late)
            fresh = copy_per_row(fn, i, got, want, logits, reqs, min_p) if alone else None  # a copy in the loop
            if fresh is not None:
                raise Mistake(*fresh)
            borrowed = borrowed_setting(fn, i, got, want, logits, reqs, min_p) if alone else None
            if borrowed is not None:
                raise Mistake(*borrowed)
            below = below_neutral_skipped(fn, i, got, want, logits, reqs, min_p)  # right above neutral only
            if below is not None:
                raise Mistake(*below)
            lost_copy = copy_write_mistake(fn, i, got, want, logits, reqs, min_p)  # a write into an indexing's copy
            if lost_copy is not None:
                raise Mistake(*lost_copy)
            own_links = _own_links(fn, i, got, want, logits, reqs, min_p)  # mask alone; bias moved; min_p's cut
            if own_links is not None:
                raise Mistake(*own_links)
            suspects = _suspects(mistakes, alone)
            # a biased token whose output occurrences went uncounted looks like bias_on_model_logit, and a
            # penalty's sign is named only when the answer flips it alone as well: each one's probe decides
            suspects = [m for m in suspects if m not in PROBED_IN_CASES or shows_on_probe(fn, m, min_p)]
            message, hint = _explain_row(i, got, want, logits, reqs, suspects, min_p)
            if hint == MIN_P_SHORTCUT_HINT and not shortcut_confirmed(fn, logits, reqs):
                message, hint = f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}", ""
            if hint == OWN_VALUES and "got the values of row" in message and alone is False:  # wrong alone too
                message, hint = f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}", ""
            if hint == GREEDY_ROWS and not _right_when_sampling(fn, i, logits, reqs, min_p):
                message, hint = f"row {i} ({_describe(reqs[i])}): {_first_difference(got[i], want[i], logits[i])}", ""
            if hint in ("", GREEDY_ROWS):  # no known mistake: a greedy row, or changes that never reached `out`?
                lost = lost_links(fn, i, got, want, logits, reqs, min_p)
                if lost is not None:
                    raise Mistake(*lost)
            if hint == MASK:  # a mask read per 32-bit word looks skipped when the vocabulary fits in one word
                message, hint = read_by_word(fn, i, got, logits, reqs) or (message, hint)
            if hint == THRESHOLD:  # a cut of the wrong size: is it argmax()'s index where max() belongs?
                message, hint = cut_at_the_argmax(fn, i, got, logits, reqs) or (message, hint)
            if MISTAKES["freq_once"] in message and writes_repeated_outputs(fn, logits, reqs):
                hint = INDEXED_WRITE  # the same row, written as row[ids] -= f: say why it did not add up
            if not hint:  # no known mistake gives this row: read what the difference is
                message, hint = read_difference(fn, i, got, want, logits, reqs, min_p) or (message, hint)
            raise Mistake(message, hint)


def _own_links(fn, i: int, got, want, logits: torch.Tensor, reqs: list[Req], min_p: bool):
    """(message, hint) for a row whose own links went wrong as a whole: a grammar row given its mask alone
    (grammar_links.py), a logit_bias whose amounts landed on other ids of the same logit_bias (bias_pairs.py),
    or min_p's cut put at log(min_p) times the row's max, a product of logs (log_product.py); None otherwise."""
    return (
        grammar_links_skipped(fn, i, got, want, logits, reqs, min_p)
        or swapped_bias(i, got, logits, reqs, min_p)
        or multiplied_logs(fn, i, got, want, logits, reqs, min_p)
    )


PROBED_IN_CASES = ("bias_on_model_logit", "freq_pres_added")  # named by a hand case only when its probe agrees
GREEDY_ROWS = "apply the chain to every row, greedy ones too"  # chain._explain_row's hint for a greedy row left alone


def _right_when_sampling(fn, i: int, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """Whether the answer gets greedy row i right once every row of the batch samples: only then was it left
    alone for being greedy (a row skipped for another reason, no output yet, stays wrong)."""
    sampling = [_sampling(r) for r in reqs]
    try:
        return _close(_call(fn, logits, sampling)[i], _reference(logits, sampling, min_p)[i])
    except Exception:
        return False


def _right_alone(fn, i: int, logits: torch.Tensor, reqs: list[Req], want: torch.Tensor) -> bool:
    """Whether the answer gets row i right when it is the only row of the batch: a wrong row that is right
    alone depends on the other rows (a setting read from another request, a threshold from the batch's
    top), never on a mistake of the row's own chain."""
    try:
        return _close(_call(fn, logits[i : i + 1], reqs[i : i + 1])[0], want[i])
    except Exception:
        return False  # whatever went wrong, it is not a mistake that needs other rows


def _suspects(mistakes: list[str], right_alone: Optional[bool]) -> list[str]:
    """`mistakes` in the order to try them for row i. A mistake of BATCH_MISTAKES shows only beside
    other rows, yet on a given batch it can give the same row as another mistake (a threshold from
    the batch's top and an absolute one drop the same tokens): `right_alone`, row i run on its own, tells
    them apart (None for a batch of one row: nothing is beside it, so every mistake stays a suspect)."""
    batch = [m for m in mistakes if m in BATCH_MISTAKES]
    if not batch or right_alone is None:
        return mistakes
    others = [m for m in mistakes if m not in batch]
    return batch + others if right_alone else others
