"""Exercise 7: tells an indexed update that does not accumulate from a loop over distinct tokens.

A frequency penalty written as `row[ids] -= f`, with `ids` the output tokens (repeats included),
takes f off each token once: an indexed write with repeated indices does not add up, every repeat
writes the same value. The row it gives is the one of the mistake "freq_once" (f once per distinct
token), and so is the row of a loop over `set(req.output_ids)`; only the way it was written tells
them apart, and the fix differs (count the tokens, rather than loop over each occurrence).

`writes_repeated_outputs(fn, logits, reqs)` runs the student's function once more under a
`TorchFunctionMode` that records every indexed write without accumulation (`t[idx] = v`,
`t[idx] -= v`, `index_put_` without `accumulate=True`, `scatter_` without `reduce`) and says
whether one of them wrote, at a row's tokens, exactly the multiset of that request's output ids,
a token at least twice.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Optional

import torch
from torch.overrides import TorchFunctionMode

from minisgl_edu.core import Req

INDEXED_WRITE = (
    "an indexed update with repeated indices does not accumulate: row[ids] -= f with a token twice in ids takes "
    "f off once (every repeat writes the same value). Count the tokens first (torch.bincount(ids, "
    "minlength=vocab), index_add_, or collections.Counter) and subtract count * frequency_penalty"
)

_SETITEM = torch.Tensor.__setitem__
_INDEX_PUT = {torch.Tensor.index_put_, torch.Tensor.index_put, torch.index_put_, torch.index_put}
_SCATTER = {torch.Tensor.scatter_, torch.Tensor.scatter, torch.scatter}


def _ints(index: Any) -> Optional[list[int]]:
    """The integers of an index component (a tensor or list of ints), flattened; None for anything else."""
    if isinstance(index, torch.Tensor):
        if index.dtype in (torch.bool, torch.uint8) or index.is_floating_point():
            return None
        return [int(t) for t in index.flatten().tolist()]
    if (
        isinstance(index, (list, tuple))
        and index
        and all(isinstance(t, int) and not isinstance(t, bool) for t in index)
    ):
        return list(index)
    return None


def _columns(target: torch.Tensor, key: Any) -> list[tuple[Optional[int], list[int]]]:
    """(row, the tokens written in it) for an indexed write into `target`: the row is None when the
    target is one row (a view of one) or the write reaches every row the same way."""
    if not isinstance(key, tuple):
        key = (key,)
    if target.dim() == 1 and len(key) == 1:
        cols = _ints(key[0])
        return [(None, cols)] if cols else []
    if target.dim() == 2 and len(key) == 2:
        rows, cols = key
        cols = _ints(cols)
        if not cols:
            return []
        if isinstance(rows, int):
            return [(rows, cols)]
        if isinstance(rows, slice):
            return [(None, cols)]
        rows = _ints(rows)
        if rows and len(rows) == len(cols):
            by_row: dict[int, list[int]] = {}
            for r, c in zip(rows, cols):
                by_row.setdefault(r, []).append(c)
            return list(by_row.items())
    return []


class _Writes(TorchFunctionMode):
    """Records the (row, tokens) of every indexed write that does not accumulate."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[Optional[int], list[int]]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            self._record(func, args, kwargs)
        except Exception:
            pass  # recording is only a diagnosis: never change what the student's code does
        return func(*args, **kwargs)

    def _record(self, func, args, kwargs) -> None:
        if func is _SETITEM and len(args) >= 2 and isinstance(args[0], torch.Tensor):
            self.writes += _columns(args[0], args[1])
        elif func in _INDEX_PUT and len(args) >= 2 and isinstance(args[0], torch.Tensor):
            accumulate = kwargs.get("accumulate", args[3] if len(args) > 3 else False)
            if not accumulate:
                self.writes += _columns(args[0], tuple(args[1]))
        elif func in _SCATTER and "reduce" not in kwargs and len(args) >= 3 and isinstance(args[0], torch.Tensor):
            dim, index = args[1], args[2]
            if isinstance(index, torch.Tensor) and dim in (-1, args[0].dim() - 1):
                if index.dim() == 1:
                    self.writes.append((None, _ints(index) or []))
                elif index.dim() == 2:
                    self.writes += [(r, _ints(index[r]) or []) for r in range(index.shape[0])]


def writes_repeated_outputs(fn, logits: torch.Tensor, reqs: list[Req]) -> bool:
    """`fn`, run again on this batch, wrote some row's output ids (a token at least twice among them)
    with one indexed write that does not accumulate."""
    mode = _Writes()
    try:
        with mode:
            fn(logits.clone(), reqs)
    except Exception:
        return False
    outputs = [Counter(r.output_ids) for r in reqs]
    for row, cols in mode.writes:
        written = Counter(cols)
        if max(written.values(), default=0) < 2:
            continue
        candidates = outputs if row is None else outputs[row : row + 1] if 0 <= row < len(outputs) else []
        if any(written == counts for counts in candidates):
            return True
    return False
