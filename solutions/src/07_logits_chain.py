from cells import code, md

CELLS = [
    md("""
# Exercise 7 — The logits chain

**Goal:** write what happens to a batch's logits between the model and the sampler: penalties on
repeated tokens, the client's logit bias and a grammar's mask, each on the rows that ask for it,
in the right order. **Time:** about 40 minutes.

`Engine.forward_batch` computes one row of logits per request that samples a
token now and calls `Sampler.sample(logits, reqs)` (`minisgl_edu/engine/sampler.py`). Its first
line is `logits = self.process_fn(logits, reqs)`: your function. Then the sampler applies
temperature, top-k and top-p and draws a token, or takes the argmax for a greedy row. Afterwards,
the engine's output step (`Engine._sample`) takes the logprobs of the requests that asked for them from the same tensor it
passed to the sampler (`take_logprobs` in `minisgl_edu/engine/logprobs.py`): the model's own
distribution, before any link of the chain. The package's own version is `process_logits` in
`minisgl_edu/engine/logits_chain.py`; don't peek before you try, and don't call it or its helpers
(nor `grammar_mask` in `engine/grammar.py`): the grader checks that the code is yours.

What you get:

| what | where |
|---|---|
| one row of logits per request, one column per token | `logits`, a float32 tensor `[N, vocab]` (the model returns float32 logits on every device); row `i` belongs to `reqs[i]` |
| the prompt's token ids, and the tokens generated so far | `req.input_ids`, `req.output_ids` (empty for the first token) |
| what the request asked for | `req.sampling_params`: `repetition_penalty` (1 means off), `frequency_penalty` and `presence_penalty` (0 means off), `logit_bias` (a dict: token id → bias), `temperature`, `is_greedy` |
| its grammar (from `json_schema`, `regex` or `ebnf`), or `None` | `req.grammar` |

Return a tensor of the same shape: the logits the sampler should use.

## The contract

Your function passes when, for every batch the grader plays, each row equals the package's chain
on that row. What that means, link by link, each on the rows whose request uses it:

1. **Repetition penalty** `p` (the definition of SGLang and vLLM, from the CTRL paper): it touches
   every token that occurs in the **prompt or the output** so far, once however often the token
   occurs. The logit keeps its sign and its size changes by the factor `p`, in the direction that
   makes the token **less** likely when `p > 1` (more likely when `p < 1`), for a negative logit as
   for a positive one. It acts on the model's own logit.
2. **Frequency penalty** `f` and **presence penalty** `r` (OpenAI's definitions): amounts taken off
   the logit of the tokens of the **output** (the prompt does not count), `f` once for every
   occurrence, `r` once for any token that occurs at all. Either may be negative, which encourages
   repeats. They are taken off the logit the repetition penalty left.
3. **Logit bias**: the client's amount lands on the logit exactly as asked, on top of whatever the
   penalties did to it (nothing scales it afterwards).
4. **Grammar mask**: a token the grammar forbids can never be picked, in every row that has a
   grammar, **greedy rows too** (a greedy row's token is the argmax of what you return); nothing
   after the mask brings it back.

And, for every batch:

* **A row whose request uses none of these comes out unchanged**, exactly, and every row uses only
  its own request's values.
* **The tensor you were given is never changed**, whichever links apply (a mask alone included):
  the engine takes the logprobs from it after you return. Only a batch that no link touches may
  come back as that very tensor.

Why the chain is built this way: a repetition penalty that scaled an already reduced logit, or a
bias, would give the client other numbers than the ones asked for; and what follows the mask
(temperature, top-k, top-p, the stretch's min_p) must only ever see allowed tokens. When a case
fails, the grader says which of these the row breaks and how the package's chain computes it.

The grammar: `req.grammar.fill_mask(bitmask, i)` writes row `i` of an XGrammar bitmask, an int32
tensor `[n, ceil(vocab / 32)]` that `xgrammar.allocate_token_bitmask(n, vocab)` makes with every bit
set. Bit `j` of word `k` stands for token `32 * k + j`, and 1 means allowed. Unpack it with torch,
or let `xgrammar.apply_token_bitmask_inplace(logits, bitmask, indices=rows)` write the `-inf`s (in
place: use it on your copy). You only read the grammar: after the sampler picks a token, the
scheduler moves it on (`req.grammar.accept(token)`).

**How others do it.** SGLang keeps one penalizer per kind
(`python/sglang/srt/sampling/penaltylib/`: `BatchedFrequencyPenalizer`, `BatchedPresencePenalizer`,
`BatchedMinNewTokensPenalizer`, driven by a `BatchedPenalizerOrchestrator`) that adds each new
output token to running counts instead of counting again at every step; its grammar backends
(XGrammar by default) fill a bitmask over the vocabulary, as here. vLLM's sampler applies the
repetition penalty (prompt and output), then frequency, then presence, as above. mini-sglang's API
accepts `presence_penalty` and `frequency_penalty` (`OpenAICompletionRequest` in
`python/minisgl/server/api_server.py`), but nothing in its engine applies them.

## Stretch: min_p (not in the engine)

The engine has no `min_p`; add it to your function as a last link. A request that uses it carries
`req.sampling_params.min_p`, a number in [0, 1]. `SamplingParams` has no such field, so the grader
sets the attribute on the requests that use it: read it with
`getattr(req.sampling_params, "min_p", 0.0)`.

**What must hold.** In a row that samples and has `min_p > 0`, the tokens kept are exactly those
whose probability, in the distribution the sampler will draw from for that row (after links 1 to
4, at the row's temperature), is **at least** `min_p` times the probability of the most likely
token; every other token becomes `-inf`, and the kept tokens keep their logits (the sampler's
softmax renormalises). A row is greedy when the sampler treats it as greedy
(`sampling_params.is_greedy`), and a greedy row is left as it is. SGLang and vLLM both have `min_p`,
applied in their samplers to the probabilities after temperature.

`check` grades it on its own score line, `logits_chain_min_p`, so the base part's score does not
depend on it. The cases: a threshold relative to the top token, rows at temperatures below and
above 1, a top token banned by a bias or forbidden by a grammar, greedy rows (temperature 0, and a
temperature with `top_k` 1), and tokens exactly at the threshold (`min_p` 1 with two tokens tied
for the top).
"""),
    code("""
from __future__ import annotations

import math

import torch
import xgrammar

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading import check
"""),
    code('''
def process_logits(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """logits: [N, vocab], row i for reqs[i]. Returns the logits the sampler uses."""
    ### BEGIN SOLUTION
    ### HINT: not implemented yet

    def uses_chain(req: Req) -> bool:
        sp = req.sampling_params
        penalties = sp.repetition_penalty != 1.0 or sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0
        min_p = getattr(sp, "min_p", 0.0) > 0 and not sp.is_greedy
        return penalties or bool(sp.logit_bias) or req.grammar is not None or min_p

    if not any(uses_chain(r) for r in reqs):
        return logits  # nothing to do, and no copy to pay for
    out = logits.float().clone()  # never change `logits`: the logprobs are taken from it
    vocab = out.shape[-1]
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]  # `row` is a view: changing it changes `out`
        # 1. repetition: once for every token seen in the prompt or the output
        if sp.repetition_penalty != 1.0:
            seen = torch.tensor(sorted(set(req.input_ids) | set(req.output_ids)), dtype=torch.long)
            values = row[seen]
            row[seen] = torch.where(values > 0, values / sp.repetition_penalty, values * sp.repetition_penalty)
        # 2. frequency and presence: counts in the output only
        if req.output_ids and (sp.frequency_penalty != 0.0 or sp.presence_penalty != 0.0):
            counts = torch.bincount(torch.tensor(req.output_ids), minlength=vocab).to(row.dtype)
            row -= sp.frequency_penalty * counts + sp.presence_penalty * (counts > 0).to(row.dtype)
        # 3. logit bias: added
        for token, bias in sp.logit_bias.items():
            row[token] += bias
        # 4. the grammar's mask, whatever the temperature
        if req.grammar is not None:
            bitmask = xgrammar.allocate_token_bitmask(1, vocab)
            req.grammar.fill_mask(bitmask, 0)
            bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
            row[~bits.flatten()[:vocab].bool()] = float("-inf")
        # 5. (stretch, not in the engine) min_p: p >= min_p * max(p) <=> logit / T >= max / T + ln(min_p)
        min_p = getattr(sp, "min_p", 0.0)
        if min_p > 0 and not sp.is_greedy:
            scaled = row / sp.temperature
            row[scaled < scaled.max() + math.log(min_p)] = float("-inf")
    return out
    ### END SOLUTION
'''),
    md("""
Try it on one row: the prompt is token 0, the output so far is tokens 1, 3, 3, with a repetition
penalty of 2 and a presence penalty of 0.5. The package's chain turns the logits `[2, -1, 0.5, 1]`
into `[1, -2.5, 0.5, 0]`; yours should too.
"""),
    code("""
example = torch.tensor([[2.0, -1.0, 0.5, 1.0]])
req = Req(0, [0], SamplingParams(repetition_penalty=2.0, presence_penalty=0.5), output_ids=[1, 3, 3])
try:
    print(process_logits(example, [req]).tolist())
    print("the model's logits are still", example.tolist())
except NotImplementedError as e:
    print("not written yet:", e)
"""),
    md("""
## Check your answer

`check` first runs unit cases on hand-made batches over a vocabulary of 12 tokens: rows that ask
for nothing, the repetition penalty (prompt and output, positive and negative logits, a penalty
below 1), frequency and presence (output only, counts), the order of the links, the bias, rows
that ask for different things in one batch, the input left as it was (in a batch that uses every
link, and in one where only grammars apply), and a real XGrammar grammar
(`(yes|no)`) on that vocabulary for greedy and sampled rows. Every row is compared with the
package's own chain; when yours differs, the message names the mistake it looks like.

Then it plugs your function into the real engine (`scheduler.engine.sampler.process_fn =
process_logits`) and runs chat requests on the default model: a repetition penalty, frequency and
presence penalties with logprobs, a bias that bans a token, a regex and a JSON schema on greedy
rows, and a plain request beside them. Tokens, finish reasons and logprobs must equal those of the
package's chain. The stretch has its own cell below.

Each case has a time limit (minutes, far more than a correct answer needs). The answer must be your
own code: a function that calls the package's chain or its helpers scores 0.
"""),
    code("""
result = check("logits_chain", process_logits)
"""),
    code("""
result_stretch = check("logits_chain_min_p", process_logits)
"""),
    md("""
## Going further

* Why can the penalties not be applied once, when the request arrives?
* A request asks for a JSON schema and for logprobs. A token that the grammar forces can come back
  with a very low logprob. Why is that the number worth showing?
* The engine's version applies each link to all of its rows at once (one `index_put_` for the
  counts of every row). What does a Python loop over the rows cost on a CPU, and what on a GPU,
  where every small operation is a kernel launch?
"""),
]
