"""Every row but the batch's last one came back as the model gave it: the answer makes its copy inside the
loop over the rows (`out = logits.float().clone()` for every request), so each request starts again from
the model's logits and the copy that holds the earlier rows' links is thrown away. Only the last row's
links reach the tensor returned.

`check_rows` (check.py) asks this for a wrong row that is right alone (a batch of one row has no earlier
row to lose), before a rebound `row` (lost_links.py), which loses the links on its own too. It names the
mistake only when the whole batch is so (every row but the last is the model's, the last is right) and
the answer does the same on a small batch of its own (`only_last_on_probe`): a logit_bias then a
repetition penalty, and the same two rows swapped; both times the first row comes back as the model
gave it and the second is right, so it is the position that loses the links, not the request.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.chain import _call, _close, _describe, _first_difference, _reference, _req, _rows

COPY_PER_ROW_HINT = (
    "copy the logits once, before the loop over the rows: a copy made inside the loop (out = logits.float().clone() "
    "for every request) starts again from the model's logits each time, so only the last row keeps its links"
)

_ROW = [2.0, 1.0, 0.5, -1.0, 0.0, 1.5, -0.5, 0.25, -2.0, 1.0, 0.75, -1.5]


def only_last_on_probe(fn) -> bool:
    """On a batch of its own (a bias of +3 on token 3, then a repetition penalty of 2 on token 1), and on the
    same two rows swapped, the answer gives the first row back as the model gave it and the second right."""
    logits = _rows(_ROW, _ROW)
    pair = [_req(prompt=(11,), logit_bias={3: 3.0}), _req(prompt=(1,), repetition_penalty=2.0)]
    for reqs in (pair, pair[::-1]):
        try:
            got = _call(fn, logits, reqs)
        except Exception:
            return False
        if not (_close(got[0], logits[0]) and _close(got[1], _reference(logits, reqs, False)[1])):
            return False
    return True


def copy_per_row(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool):
    """(message, hint) when row i, not the batch's last, came back as the model gave it, every row but the
    last did too, the last row is right, and the answer does so on the probe batch; None otherwise."""
    last = len(reqs) - 1
    if fn is None or i == last or not _close(got[last], want[last]):
        return None
    if not all(_close(got[k], logits[k].float()) for k in range(last)):
        return None
    if not only_last_on_probe(fn):
        return None
    return (
        f"row {i} ({_describe(reqs[i])}): this row came back as the model gave it, with none of its links, while the "
        f"batch's last row is right ({_first_difference(got[i], want[i], logits[i])}). On a batch of two rows, a "
        "logit_bias then a repetition penalty, and on the same two swapped, only the second row got its links both "
        "times: what the loop did for a row is lost when it goes on to the next one",
        COPY_PER_ROW_HINT,
    )
