"""The generated case's hint (scenes.py) for a row whose numbers broke on the way, not its chain.

Two mistakes of floating point give rows no known mistake of the chain explains: a grammar's mask
multiplied by -inf, where 0 * -inf makes NaN of the tokens the mask leaves at 0 (mask_product.py), and,
in the stretch, min_p's probabilities formed as exp(row / T) / sum without the max subtracted, which
overflow to inf / inf = NaN on large logits (overflow.py). Both are asked before the walk through the
chain, whose numbers would only quote the NaN or blame another link.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.logits_chain.mask_product import times_inf
from minisgl_edu.grading.logits_chain.overflow import OVERFLOW_HINT, overflow_said


def number_hint(
    fn: Any, i: int, got: torch.Tensor, logits: torch.Tensor, reqs: list[Req], stretch: bool
) -> Optional[str]:
    """The hint for wrong row i when its mask was multiplied by -inf, or (stretch) min_p's exp overflowed on
    it; None otherwise. `fn`, the answer, is probed before an overflow is named."""
    product = times_inf(got[i], reqs[i])
    if product is not None:
        return f"row {i}: {product[0]}. {_sentence(product[1])}"
    overflow = overflow_said(fn, i, logits, reqs) if stretch else None
    return None if overflow is None else f"row {i}: {overflow}. {_sentence(OVERFLOW_HINT)}"


def _sentence(hint: str) -> str:
    """A hint, written to stand alone, as the second sentence of the generated case's hint."""
    return hint[:1].upper() + hint[1:]
