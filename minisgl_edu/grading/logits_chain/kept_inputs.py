"""The hints of the generated case (scenes.py) for what `process_logits` must leave as it was.

Where this sits: scenes.py's `play` compares, after the logits returned, the tensor the function was
given (the engine takes the logprobs from it after the call) and the requests' prompts, outputs,
sampling parameters and grammars with what they were before the call. A difference in one of them is
explained by the hint here of the same name.
"""

from __future__ import annotations

import torch


def given_changed(before: torch.Tensor, after: torch.Tensor) -> str:
    """The hint for a given tensor that was `before` the call and is `after` it."""
    changed = (after != before) & ~(torch.isnan(after) & torch.isnan(before))
    rows = sorted({int(i) for i in changed.nonzero()[:, 0]})
    only_inf = bool(torch.isneginf(after[changed]).all())
    what = "wrote -inf into" if only_inf else "changed"
    return (
        f"your function {what} the tensor it was given, in place (row {rows[0] if rows else '?'}). The engine takes "
        "the logprobs from that tensor after you return, so work on a copy, whichever links apply, a mask or a "
        "min_p filter alone included (logits.float() is the same tensor when it is float32; clone() copies)"
    )


KEPT_HINTS = {
    "reqs' input_ids (prompts)": (
        "you changed a request's prompt in place (e.g. `seen = req.input_ids; seen += req.output_ids` extends "
        "req.input_ids itself): the scheduler keeps using it. Build a new list or set"
    ),
    "reqs' output_ids": "you changed a request's output in place: only the scheduler appends to req.output_ids",
    "reqs' sampling_params": "only read req.sampling_params: it is the client's request, used again every step",
    "what the grammars allow next": (
        "only read the grammar (fill_mask): the scheduler moves it on with accept() after the sampler picks"
    ),
}
