"""Probes of the answer itself, for the generated case of exercise 7: a penalty left out, or undone by the bias.

The generated case's hint (`logits_hint` in scenes.py) reads a shrunk row, and on a row whose every
penalised token is also biased, three mistakes give the same numbers: the bias added to the model's
logit (which undoes the penalty on that token), the repetition penalty over the output only, and the
repetition penalty waiting for the first output token (a prompt [0], no output, token 0 biased: all
three leave token 0 unpenalised). So before the hint names one of them, it runs the answer once more on
a small row of its own, where they differ, and names the mistake only when the answer makes it there:

* the repetition penalty 2 over a row of 2.0s, prompt [0, 1], output [2], bias +1 on token 0 alone.
  Token 1 is penalised but not biased: the output-only mistake leaves it at 2, the bias on the model's
  logit penalises it (1) and gives token 0 2 + 1 = 3 instead of 2 / 2 + 1 = 2.
* the same with no output yet: waiting for the first output token leaves token 1 at 2 too.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.logits_chain.chain import V, _chain, _close, _req, _rows
from minisgl_edu.grading.logits_chain.min_p_probes import _answer

# mistake -> (prompt, output) of its probe row; every probe: repetition penalty 2, bias +1 on token 0.
PROBES = {
    "rep_output_only": ([0, 1], [2]),
    "bias_on_model_logit": ([0, 1], [2]),
    "rep_waits_for_output": ([0, 1], []),
}


def shows_on_probe(fn: Any, mistake: str, stretch: bool) -> bool:
    """Whether the answer gives this mistake's row on the probe of its own (True for a mistake with no
    probe, or with no answer to run: then the shrunk row alone decides, as before)."""
    if mistake not in PROBES or fn is None:
        return True
    prompt, output = PROBES[mistake]
    logits = _rows([2.0] * V)
    # (the stretch's min_p 0 is set, as its answers may read it; 0 is off)
    reqs = [_req(prompt, output, repetition_penalty=2.0, logit_bias={0: 1.0}, min_p=0.0 if stretch else None)]
    got = _answer(fn, logits, reqs)
    return got is not None and _close(got[0], _chain(logits, reqs, mistake, stretch)[0])
