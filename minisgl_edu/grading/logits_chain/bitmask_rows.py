"""The grammar's bitmask read at rows that are not the batch's rows.

`grammar.fill_mask(bitmask, k)` writes a request's mask into row k of the bitmask, and
`xgrammar.apply_token_bitmask_inplace(logits, bitmask)` masks logits row i with bitmask row i (with
`indices`, each row i listed, still from bitmask row i). An answer that fills the j-th grammar
request's mask into row j (one bitmask row per grammar request) and reads it at the request's row
of the batch, or the other way round, puts a mask on another request's row, or reads past the
bitmask's end (an index error). All such answers are right whenever the rows that have a grammar
are the first rows of the batch, where the j-th grammar request is row j, and a bitmask of one row
per grammar request fits a batch of grammar rows only: `misplaced` runs the answer again on the
batch with those rows moved to the front, then on those rows and the others apart, and
`bitmask_rows` names the mistake when that puts the batch right, and the batch with its grammars
taken off is right as well (otherwise something else than the bitmask needs the whole batch). `call_or_name` and `run_or_name`
call the answer and, when it raises, ask the same question before the error goes on to the student
(first flat_rows.py's, rows joined into one flat tensor where the shape is wrong; then mask_words.py's,
a bitmask of vocab // 32 words; mask_padding.py's, a bitmask used with its padding bits, and crash_reads.py's: the vocabulary read from the rows, counts
shorter than the vocabulary, a property called).
"""

from __future__ import annotations

import copy
import traceback
from typing import Callable, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.logits_chain.chain import _call, _close_all, _reference
from minisgl_edu.grading.logits_chain.crash_reads import read_crash
from minisgl_edu.grading.logits_chain.flat_rows import flat_rows
from minisgl_edu.grading.logits_chain.mask_padding import padded_mask
from minisgl_edu.grading.logits_chain.mask_words import short_words


def _right(fn: Callable, logits: torch.Tensor, reqs: list[Req], rows: list[int], min_p: bool) -> bool:
    """The answer gets every row right on the batch of these rows of `reqs`, in this order."""
    part, part_reqs = logits[rows], [reqs[i] for i in rows]
    try:
        return _close_all(_call(fn, part, part_reqs), _reference(part, part_reqs, min_p))
    except Exception:
        return False


def _without_grammars(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> bool:
    """The answer gets every row right on the same batch with every grammar taken off: no bitmask at all."""
    plain = [Req(r.uid, list(r.input_ids), copy.copy(r.sampling_params), list(r.output_ids)) for r in reqs]
    try:
        return _close_all(_call(fn, logits.clone(), plain), _reference(logits, plain, min_p))
    except Exception:
        return False


def misplaced(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool) -> Optional[tuple[list, str]]:
    """(the rows that have a grammar, how the batch was put right) when the answer gets every row right
    once they are moved to the front ("moved"), or on those rows alone and on the others alone
    ("apart"); None otherwise, and None when the batch goes wrong without its grammars too (a min_p link
    that fails on several rows at once, say: halving the batch puts it right, yet no bitmask is involved)."""
    rows = [i for i, r in enumerate(reqs) if r.grammar is not None]
    others = [i for i in range(len(reqs)) if i not in rows]
    if not rows or not others or not _without_grammars(fn, logits, reqs, min_p):
        return None
    if rows != list(range(len(rows))) and _right(fn, logits, reqs, rows + others, min_p):
        return rows, "moved"
    if _right(fn, logits, reqs, rows, min_p) and _right(fn, logits, reqs, others, min_p):
        return rows, "apart"
    return None


RULE = (
    "fill_mask(bitmask, i) writes bitmask row i, and apply_token_bitmask_inplace masks logits row i with bitmask "
    "row i (indices only choose which rows i to mask). Allocate one bitmask row per row of the batch, "
    "allocate_token_bitmask(len(reqs), vocab), and fill and read request i's mask at row i"
)


def bitmask_rows(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, what: str) -> Optional[tuple]:
    """(message, hint) naming bitmask rows that do not line up with the batch's rows, after `what` (what
    went wrong on the batch as given), when the batch is put right by moving its grammar rows to the
    front, or by running them apart from the other rows; else None."""
    found = misplaced(fn, logits, reqs, min_p)
    if found is None:
        return None
    rows, how = found
    front = list(range(len(rows)))
    if how == "moved":
        seen = (
            f"with them moved to the front (rows {front}, the other rows after them) your function gets every row "
            "right. So the bitmask row a grammar request's mask is written to or read from is its place among the "
            "grammar requests, not its row of the batch"
        )
        short = f"right only once the grammar rows {rows} are moved to rows {front}"
    else:
        seen = (
            "your function gets every row right on these rows alone and on the other rows alone, but not on the "
            "batch of both. So the bitmask does not have the batch's rows: one row per grammar request does not "
            "fit a batch with rows that have none"
        )
        short = f"right on the grammar rows {rows} alone and on the other rows alone, not together"
    return (
        f"{what}. The rows that have a grammar are rows {rows} of this batch; {seen}: {RULE}",
        f"the grammar bitmask's rows did not line up with the batch's rows ({short}): request i's mask is filled "
        "into and read from bitmask row i, a bitmask of len(reqs) rows, not row j for the j-th request that has a "
        "grammar",
    )


def _crashed(fn: Callable, error: Exception) -> str:
    """What went wrong, with the line of the answer that raised (its own file only: the error may come
    from inside a compiled library, whose frames are no line of the student's)."""
    first = (str(error).strip().splitlines() or [""])[-1][:300]
    code = getattr(fn, "__code__", None)
    mine = [f for f in traceback.extract_tb(error.__traceback__) if code and f.filename == code.co_filename]
    at = f", at line {mine[-1].lineno}: `{(mine[-1].line or '').strip()}`" if mine else ""
    return f"your process_logits raised {type(error).__name__} on this batch{at} ({first})"


def _named_crash(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool, error: Exception):
    """(message, hint) for a crash a known mistake explains, asked in this order: rows joined into one flat
    tensor (flat_rows.py: the shape _call rejects), misplaced bitmask rows, a bitmask of too few words
    (mask_words.py), a bitmask used with its padding bits, then crash_reads.py's; None otherwise."""
    what = _crashed(fn, error)
    return (
        flat_rows(fn, error)
        or bitmask_rows(fn, logits, reqs, min_p, what)
        or short_words(fn, reqs, what)
        or padded_mask(fn, reqs, what)
        or read_crash(fn, logits, reqs, min_p, error, what)
    )


def call_or_name(fn: Callable, logits: torch.Tensor, reqs: list[Req], min_p: bool = False) -> torch.Tensor:
    """_call; when the answer raises and a known mistake explains it, a Mistake that says so."""
    try:
        return _call(fn, logits, reqs)
    except Exception as error:
        named = _named_crash(fn, logits, reqs, min_p, error)
        if named is None:
            raise
        raise Mistake(*named) from None  # (the line is in the message)


def run_or_name(fn: Callable, given: torch.Tensor, reqs: list[Req]) -> None:
    """fn(given, reqs) on the very tensor (a case that looks for in-place changes); when it raises and a
    known mistake explains it, a Mistake that says so."""
    logits = given.clone()
    try:
        fn(given, reqs)
    except Exception as error:
        named = _named_crash(fn, logits, reqs, False, error)
        if named is None:
            raise
        raise Mistake(*named) from None  # (the line is in the message)
