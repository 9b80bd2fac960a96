"""The rows joined end to end: a flat [N * vocab] tensor returned where [N, vocab] belongs.

An answer that works on a copy of each request's row and gathers them with `torch.cat(rows)` gets
one 1-D tensor: cat joins N rows of [vocab] into N * vocab values, where `torch.stack(rows)` puts
them one above the other. The sampler would then read a single long row. `_call` (chain.py) rejects
the shape; `flat_rows` asks, before the error goes on to the student, whether on a batch of its own
the answer returns 1-D of N * vocab values that are the right rows in order, so that stacking them
is all that is missing. bitmask_rows.py asks it after its own question.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import V, _close_all, _random, _reference, _req


def _probe() -> tuple[torch.Tensor, list[Req]]:
    """Two rows, each with a repetition penalty, so that every answer goes through its chain."""
    return _random(2, 47), [
        _req(prompt=[1, 2], output=[3], repetition_penalty=1.5),
        _req(prompt=[4], output=[5, 5], repetition_penalty=2.0),
    ]


def _joined(fn: Callable) -> bool:
    """True if the answer returns the probe's right rows joined end to end: 1-D, 2 * V values, row 0 then row 1."""
    logits, reqs = _probe()
    try:
        out = fn(logits.clone(), reqs)
    except Exception:
        return False
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (2 * V,):
        return False
    return _close_all(out.detach().float().view(2, V), _reference(logits, reqs, False))


def flat_rows(fn: Callable, error: Exception) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer returned a tensor of the wrong shape and, on a batch of two rows of
    its own, returns the two right rows as one flat tensor of 2 * vocab values; None otherwise."""
    if not isinstance(error, AssertionError) or "must return a tensor of shape" not in str(error):
        return None
    if not _joined(fn):
        return None
    return (
        f"{error}. On a batch of 2 rows of {V} tokens of its own your function returns one flat tensor of "
        f"{2 * V} values: the two right rows joined end to end. torch.cat of N rows of shape [vocab] gives "
        "[N * vocab]; the sampler needs one row per request",
        "return a tensor of shape [N, vocab], the rows stacked one per request (torch.stack(rows)), not joined "
        "end to end (torch.cat(rows) of 1-D rows gives one flat [N * vocab] tensor)",
    )
