"""The case "the input tensor is not changed": the engine takes the logprobs from the tensor it gave
`process_logits` after the call, so the answer must work on a copy, in every batch that a link
touches (one where only grammars' masks apply included). The answer is called on the very tensor;
a crash is read by bitmask_rows.py before it goes on to the student.
"""

from __future__ import annotations

import torch

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.logits_chain.bitmask_rows import run_or_name
from minisgl_edu.grading.logits_chain.chain import _describe, _grammar, _random, _req
from minisgl_edu.grading.logits_chain.mistakes import MASK_IN_PLACE


def _given_unchanged(fn, logits: torch.Tensor, reqs: list[Req], why, mask_hint: str = "") -> None:
    """The tensor `fn` was given is as it was; `mask_hint` is the hint when all it changed is -inf written in."""
    given = logits.clone()
    run_or_name(fn, given, reqs)
    for i in range(len(reqs)):
        if not torch.equal(given[i], logits[i]):
            changed = given[i] != logits[i]
            raise Mistake(why(i), mask_hint if bool(torch.isneginf(given[i][changed]).all()) else "")


def case_not_in_place(fn):
    logits = _random(4, 5)
    reqs = [
        _req((1, 2), (3, 3), repetition_penalty=1.3, frequency_penalty=0.5),
        _req((4,), (5,), logit_bias={6: 2.0}),
        _req((1,), (), grammar=_grammar()),
        _req((1,), (2,)),
    ]
    _given_unchanged(
        fn,
        logits,
        reqs,
        lambda i: (
            f"your process_logits changed the tensor it was given, in place (row {i}, {_describe(reqs[i])}). "
            "The engine takes logprobs from that same tensor after your function returns, so a client "
            "asking for logprobs would get the penalised numbers instead of the model's. Work on a copy "
            "(note that logits.float() is the same tensor when it already is float32; clone() copies)"
        ),
    )
    # Only grammars apply here: no number is computed, but -inf written into the given tensor is a
    # change all the same. (The package's chain returns the given tensor only when no link applies.)
    logits = _random(3, 6)
    reqs = [
        _req((1,), (), grammar=_grammar()),
        _req((2,), (6,), grammar=_grammar(accepted=(6,)), temperature=0.7),
        _req((1,), (2,)),
    ]
    _given_unchanged(
        fn,
        logits,
        reqs,
        lambda i: (
            f"in a batch where only grammars' masks apply, your process_logits wrote into the tensor it "
            f"was given (row {i}, {_describe(reqs[i])}): masking in place is a change too. The engine takes "
            "the logprobs from that tensor afterwards, so every token the grammar forbids would report a "
            "logprob of -inf instead of the model's. Copy before any link applies, the mask included: only a "
            "batch that no link touches may come back as the very tensor it was given"
        ),
        MASK_IN_PLACE,
    )
