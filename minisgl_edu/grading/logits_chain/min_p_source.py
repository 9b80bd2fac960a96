"""min_p read from the request instead of its sampling params (the stretch, logits_chain_min_p).

Where this sits: min_p.py's hand cases ask `min_p_on_the_request` whenever a batch shows a
mistake, before its hint goes to the student. The stretch's field is
`req.sampling_params.min_p`; a Req has no min_p, so `getattr(req, "min_p", 0.0)` is always 0 and
min_p never cuts a row: the rows look as if min_p were skipped. The probe tells why: on a row of
its own (temperature 1, min_p 0.5 on its sampling params) the answer leaves the row as the chain
without min_p gives it, and with the same 0.5 also set as `req.min_p` it cuts the row right.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.logits_chain.chain import _call, _close_all, _req, reference_chain

# At temperature 1 with min_p 0.5 the threshold is 4 - 0.69: only token 0 stays.
ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]


def _reads_the_request(fn: Callable) -> bool:
    logits = torch.tensor([ROW])
    plain, on_req = _req(temperature=1.0, min_p=0.5), _req(temperature=1.0, min_p=0.5)
    on_req.min_p = 0.5  # the same value where the contract does not put it
    try:
        skipped = _close_all(_call(fn, logits, [plain]), package_chain(logits.clone(), [plain]).float())
        return skipped and _close_all(_call(fn, logits, [on_req]), reference_chain(logits.clone(), [on_req]).float())
    except Exception:
        return False


def min_p_on_the_request(fn: Callable, what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer takes min_p from the request, not its sampling params, after `what`
    (what went wrong on the case's batch); None otherwise."""
    if not _reads_the_request(fn):
        return None
    return (
        f"{what}. Why: on a row of its own (temperature 1, min_p 0.5 on its sampling params) your function "
        "leaves the row as the chain without min_p gives it, yet with the same 0.5 also set as req.min_p it cuts "
        "the row right. So it reads min_p from the request, which has no such field: min_p is "
        "req.sampling_params.min_p",
        "read min_p where the contract puts it: req.sampling_params.min_p, not req.min_p (a Req has no min_p, "
        "so getattr(req, 'min_p', 0.0) is always 0 and min_p never cuts a row)",
    )
