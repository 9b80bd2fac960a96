"""Exercise 7: a write that lands in a copy made by indexing, and is then thrown away.

`row[seen][values > 0] /= p`, `out[i, idx][mask] = v` or `row[seen].div_(p)` look like in-place
updates of the row, but `row[seen]` with a tensor or list `seen` (advanced indexing) returns a NEW
tensor, a copy: the write changes that copy, which nobody reads again, and the row stays as it was.
Only one indexing per write reaches the row (`row[seen] = ...`, `x[i, idx] = v`, `index_put_`,
`scatter_`). The row such an answer returns is the chain with that link left out; how it was written
is what tells it apart from a link skipped, or from a row rebound with `row = row - ...` (lost_links.py).

`copy_write_mistake` names this when row i is the chain with one link left out, and
`writes_into_lost_copies(fn, logits, reqs)` runs the answer once more under a `TorchFunctionMode`
that remembers each tensor an indexing returned as a copy (its storage is not its source's), and
counts the in-place writes into such a copy (`copy[...] = v`, `copy /= p`, `copy.masked_fill_(...)`)
after which the copy is never read again.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

import torch
from torch.overrides import TorchFunctionMode

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _close, _describe, _first_difference, _min_p_of, _reference

COPY_WRITE_HINT = (
    "x[idx][...] = v writes into a copy when idx is a tensor/list (advanced indexing): index once, x[i, idx] = v, "
    "or use index_put_/scatter_"
)

_GETITEM, _SETITEM = torch.Tensor.__getitem__, torch.Tensor.__setitem__


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _tensors(args: Any) -> list[torch.Tensor]:
    """The tensors among `args`, one level of lists and tuples deep."""
    found = []
    for a in args:
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found += [b for b in a if isinstance(b, torch.Tensor)]
    return found


def _in_place(func) -> bool:
    name = getattr(func, "__name__", "")
    return func is _SETITEM or (name.endswith("_") and not name.startswith("_")) or name.startswith("__i")


class _CopyWrites(TorchFunctionMode):
    """Records the copies indexing returned, the writes into them, and which copies were read afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.copies: list[torch.Tensor] = []  # kept alive, so that no id is reused while the answer runs
        self.written: set[int] = set()
        self.read_after: set[int] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        try:
            self._record(func, args, kwargs, out)
        except Exception:
            pass  # recording is only a diagnosis: never change what the student's code does
        return out

    def _record(self, func, args, kwargs, out) -> None:
        ids = {id(c) for c in self.copies}
        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        write = _in_place(func) and target is not None and id(target) in ids
        if write:
            self.written.add(id(target))
            self.read_after.discard(id(target))
        for t in _tensors(list(args[1:] if write else args) + list(kwargs.values())):
            if id(t) in self.written:
                self.read_after.add(id(t))
        is_copy = isinstance(out, torch.Tensor) and target is not None and out.numel() > 0
        if func is _GETITEM and is_copy and _storage(out) != _storage(target):
            self.copies.append(out)

    def lost(self) -> int:
        return len(self.written - self.read_after)


def writes_into_lost_copies(fn, logits: torch.Tensor, reqs: list[Req]) -> bool:
    """`fn`, run again on this batch, wrote in place into a copy that an indexing returned, and never read
    that copy again: the write changed nothing the answer returns."""
    mode = _CopyWrites()
    try:
        with mode:
            out = fn(logits.clone(), reqs)
    except Exception:
        return False
    if isinstance(out, torch.Tensor) and id(out) in mode.written:
        return False  # the copy is what the answer returns
    return mode.lost() > 0


def _without(req: Req, link: str) -> Optional[Req]:
    """`req` with one link taken away (None when it does not use that link)."""
    sp = copy.copy(req.sampling_params)  # (keeps the stretch's min_p, set on the instance)
    grammar = req.grammar
    if link == "the repetition penalty" and sp.repetition_penalty != 1.0:
        sp.repetition_penalty = 1.0
    elif link == "the frequency and presence penalties" and (sp.frequency_penalty or sp.presence_penalty):
        sp.frequency_penalty, sp.presence_penalty = 0.0, 0.0
    elif link == "the logit_bias" and sp.logit_bias:
        sp.logit_bias = {}
    elif link == "the grammar's mask" and grammar is not None:
        grammar = None
    elif link == "min_p" and _min_p_of(sp) > 0:
        sp.min_p = 0.0
    else:
        return None
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=grammar)


LINKS = [
    "the repetition penalty",
    "the frequency and presence penalties",
    "the logit_bias",
    "the grammar's mask",
    "min_p",
]


def _lost_link(i: int, got: torch.Tensor, want: torch.Tensor, logits: torch.Tensor, reqs: list[Req], min_p: bool):
    """The one link of row i whose changes are missing from the answer's row: the row is the chain on
    the request without that link (and the link changes the row); None when no such link is found."""
    for link in LINKS:
        variant = _without(reqs[i], link)
        if variant is None:
            continue
        without = _reference(logits[i : i + 1], [variant], min_p)[0]
        if not _close(without, want[i]) and _close(got[i], without):
            return link
    return None


def copy_write_mistake(fn, i: int, got, want, logits: torch.Tensor, reqs: list[Req], min_p: bool):
    """(message, hint) when row i is the chain with one link left out AND the answer, run again on the batch,
    wrote into a copy made by indexing that it never read again; None otherwise."""
    link = _lost_link(i, got, want, logits, reqs, min_p)
    if link is None or not writes_into_lost_copies(fn, logits, reqs):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): {link} left no trace in this row: it is the chain without {link} "
        f"({_first_difference(got[i], want[i], logits[i])}), and your function wrote into a tensor that an indexing "
        "returned as a copy, then never read that copy again. With a tensor or list `idx`, `row[idx]` is a new "
        "tensor (advanced indexing): row[idx][mask] = v, row[idx] /= p or row[idx].div_(p) change that copy, not the "
        "row",
        f"{link} changed nothing in the tensor you return: {COPY_WRITE_HINT}",
    )
