"""Probes of the answer itself, for exercise 7's hints: a penalty left out, undone by the bias, or added.

The generated case's hint (`logits_hint` in scenes.py) reads a shrunk row, and on a row whose every
penalised token is also biased, three mistakes give the same numbers: the bias added to the model's
logit (which undoes the penalty on that token), the repetition penalty over the output only, and the
repetition penalty waiting for the first output token (a prompt [0], no output, token 0 biased: all
three leave token 0 unpenalised). So before the hint names one of them, it runs the answer once more on
a small row of its own, where they differ, and names the mistake only when the answer makes it there:

* the repetition penalty 2 over a row of 2.0s, prompt [0, 1], output [2], bias +1 on token 0 alone.
  Token 1 is penalised but not biased: the output-only mistake leaves it at 2, the bias on the model's
  logit penalises it (1) and gives token 0 2 + 1 = 3 instead of 2 / 2 + 1 = 2. The hand cases
  (`check_rows`, check.py) ask it too: a biased token whose output occurrences were not counted (they
  are in the prompt too, say) looks there like its penalty undone by the bias.
* the same with no output yet: waiting for the first output token leaves token 1 at 2 too.

The repetition penalty over the prompt only (`rep_prompt_only`) and one that leaves negative logits as
they are give the same shrunk row when its output tokens are the negative ones. Its probe, a row of 2.0s
with prompt [0] and output [1], tells them apart: only the first leaves token 1 at 2.

Presence left out of a row whose frequency_penalty is 0 (`pres_needs_freq`) gives the model's row
back, and so does an answer that skips output tokens that also occur in the prompt, on a shrunk row
whose prompt holds its only output token. Its probe, presence 0.75 alone with an output token that is
not in the prompt, tells them apart: only the first leaves that token unpenalised.

Frequency and presence added to the logit like the bias (`freq_pres_added`) is named only when the answer
adds them on a probe of its own too: a row of 2.0s, prompt [0], output [1, 1, 2], frequency 0.5 and
presence 0.25, where token 1 must come out 0.75 and token 2 1.25 (added: 3.25 and 2.75). A row that a
case's larger batch got wrong for another reason can land on the added numbers by chance; the probe
asks the sign alone.
"""

from __future__ import annotations

import copy
from typing import Any

from minisgl_edu.grading.logits_chain.chain import V, _chain, _close, _req, _rows
from minisgl_edu.grading.logits_chain.min_p_probes import _answer

# every probe but presence's: repetition penalty 2, bias +1 on token 0
UNDONE = {"repetition_penalty": 2.0, "logit_bias": {0: 1.0}}

# mistake -> (prompt, output, settings) of its probe row
PROBES = {
    "rep_output_only": ([0, 1], [2], UNDONE),
    "bias_on_model_logit": ([0, 1], [2], UNDONE),
    "rep_waits_for_output": ([0, 1], [], UNDONE),
    "rep_prompt_only": ([0], [1], {"repetition_penalty": 2.0}),
    "pres_needs_freq": ([1], [0], {"presence_penalty": 0.75}),
    "freq_pres_added": ([0], [1, 1, 2], {"frequency_penalty": 0.5, "presence_penalty": 0.25}),
}


def shows_on_probe(fn: Any, mistake: str, stretch: bool) -> bool:
    """Whether the answer gives this mistake's row on the probe of its own (True for a mistake with no
    probe, or with no answer to run: then the shrunk row alone decides, as before)."""
    if mistake not in PROBES or fn is None:
        return True
    prompt, output, settings = PROBES[mistake]
    logits = _rows([2.0] * V)
    # (the stretch's min_p 0 is set, as its answers may read it; 0 is off)
    reqs = [_req(prompt, output, min_p=0.0 if stretch else None, **copy.deepcopy(settings))]
    got = _answer(fn, logits, reqs)
    return got is not None and _close(got[0], _chain(logits, reqs, mistake, stretch)[0])
