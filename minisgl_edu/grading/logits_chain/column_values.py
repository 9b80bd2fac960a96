"""Per-row penalty values broadcast over the vocabulary: a crash read as one known mistake.

Where this sits: crash_reads.py's `read_crash` (every hand case's crash) and the generated case's
`play` (scenes.py) ask `values_over_tokens` when the answer raised. An answer that vectorises the
frequency or presence penalty over the batch builds one value per row, a tensor of shape [N], and
combines it with the [N, vocab] counts: broadcasting lines a 1-D tensor up with the LAST dimension,
the vocabulary, not with the rows. A batch of one row works (a single value is a scalar), any other
batch raises, unless N equals the vocabulary's size, where row i, token t gets the value of row t's
request. The probe is that square batch: V rows over the V tokens of the cases, every row with the
same output and its own penalty (only the frequency penalty, then only the presence penalty).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from minisgl_edu.grading.logits_chain.chain import V, _call, _close_all, _req

OUTPUT = [1, 1, 2, 5]  # counts 2, 1 and 1: the frequency penalty counts, the presence penalty does not
NAMES = ("frequency_penalty", "presence_penalty")

COLUMN_HINT = (
    "per-row penalty values (one frequency_penalty or presence_penalty per request, a tensor of shape [N]) were "
    "broadcast over the vocabulary, not over the rows: make them a column of shape [N, 1] (values[:, None], or "
    "unsqueeze(1)), so that each row of the [N, vocab] counts is scaled by its own request's value"
)


def _value(row: int) -> float:
    return 0.15 * (row + 1)  # 0.15 to 1.8: in the contract's range, [-2, 2]


def _over_tokens(fn: Callable, name: str) -> bool:
    """True if, on the square probe with only `name` set (row i: 0.15 * (i + 1)), the answer gives row i, token t
    the value of row t; False if it gives anything else or raises."""
    logits = torch.linspace(-1.0, 1.0, V).repeat(V, 1) + 0.1 * torch.arange(V, dtype=torch.float32)[:, None]
    reqs = [_req(output=OUTPUT, **{name: _value(i)}) for i in range(V)]
    counts = torch.bincount(torch.tensor(OUTPUT), minlength=V).float().repeat(V, 1)
    values = torch.tensor([_value(t) for t in range(V)])  # [V], lined up with the tokens
    taken = counts if name == "frequency_penalty" else (counts > 0).float()
    try:
        return _close_all(_call(fn, logits, reqs), logits - values * taken)
    except Exception:
        return False


def values_over_tokens(fn: Callable, what: str) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer, which raised on a batch (`what`), gives row i, token t of the square
    probe the penalty of row t's request; None otherwise."""
    name = next((n for n in NAMES if _over_tokens(fn, n)), None)
    if name is None:
        return None
    return (
        f"{what}. On a batch of {V} rows over the {V} tokens (as many rows as tokens, where the shapes happen to "
        f"fit), every row with output {OUTPUT} and row i with {name} 0.15 * (i + 1), your function gave row i, "
        f"token t the {name} of row t: a tensor of one value per row, shape [N], combined with [N, vocab] counts, "
        "lines up with the last dimension, the vocabulary, not with the rows (and with N rows of another size, "
        "the shapes do not fit at all)",
        COLUMN_HINT,
    )
