from cells import code, md

CELLS = [
    md("""
# Exercise 8 — The verify step of speculative decoding

**Goal:** write what the scheduler does with one request after a verify forward pass: which of its
guessed tokens it keeps, where a finish cuts them, how much of its KV cache stays valid and which
pages go back. **Time:** about 35 minutes.

## Speculative decoding in four lines

A decode step reads every weight of the model to compute one token per request. With
`speculative_algorithm="ngram"` the scheduler guesses a request's next k tokens first, the
**drafts** (`Speculator.drafts` in `scheduler/speculator.py`: the tokens that followed the last earlier occurrence of the
request's last few tokens, `scheduler/ngram.py`). The request then computes k+1 positions in one
forward pass, its newest token and the k drafts, and the engine gives back the model's own token at
each of them, the **targets** (`engine/verify.py`). If the model agrees with the first drafts, the
request gets several tokens for the price of about one step; if not, it still gets the one token a
plain decode step would have given.

## What you write

After a verify batch, the speculator (`Speculator.verified`) hands each request that had drafts to
`Scheduler.verify_fn`, by default
`verify_step` in `minisgl_edu/scheduler/verify_step.py` (don't peek before you try, and don't call it,
`accept_greedy` or `check_finish`: the grader checks that the code is yours). Your function gets:

| argument | what it is |
|---|---|
| `req.prompt_len` | tokens of the prompt: positions count from its first token |
| `req.output_ids` | the tokens generated before this step; `output_ids[-1]` is the newest, computed in this pass at position `prompt_len + len(output_ids) - 1` |
| `req.max_new_tokens`, `req.eos_ids`, `req.ignore_eos`, `req.stop`, `req.decode` | what the finish check of exercise 1 uses; `decode(ids)` turns token ids into text |
| `req.pages`, `req.page_size` | the request's page-table row: `pages[i]` holds positions `i * page_size` to `(i + 1) * page_size - 1`; the scheduler reserved pages for the newest token and every draft |
| `req.prefix_len` | its first `prefix_len` tokens sit in pages of the prefix cache (shared, perhaps, with other requests) |
| `drafts` | the k guessed tokens, at the positions after the newest token |
| `targets` | `targets[j]`: the model's token after the newest token and drafts `0..j-1` (k+1 of them; with sampling, see below) |

and returns a `VerifyResult(accepted, tokens, finish_reason, kv_len, free_pages)`:

What must hold (the grader compares every field with the package's step, and the engine's output
with a run without drafts):

1. **Accept.** The request gets exactly the tokens that greedy decoding one token at a time would
   have given: the drafts as long as the model agrees with them, then the model's own token at the
   first position where it does not, or after the last draft when it agrees with every one (the
   "bonus"). Nothing computed after a rejected draft counts: those positions followed a token the
   request never gets. So a step gives 1 to k+1 tokens. `accepted` is the number of drafts the model
   agreed with.
2. **Cut.** The request finishes on the same token, for the same reason, as it would without
   drafts: each new token obeys the rules of exercise 1 as if it had come in a step of its own
   (`"stop"` on one of `eos_ids` unless `ignore_eos`, or when the generated text contains a stop
   string, wherever that string begins and whatever characters it is made of, even with up to three EOS
   tokens that `ignore_eos` kept among its own (they decode to no text); `"length"` when the output
   reaches `max_new_tokens`; `"stop"` when both hold). `tokens` ends on the first token that
   finishes the request and `finish_reason` says why (`None` when none does). `accepted` still
   counts the drafts the model agreed with, before the cut.
3. **Roll back.** `kv_len` is the number of positions, from the prompt's first token, whose K/V is
   valid after the step: those of every token the request now has but its newest (the newest's K/V
   is computed in the next step, as after any decode step). The rejected drafts' K/V is dead: the
   scheduler sets `req.cached_len = kv_len`, and the prefix cache takes that many tokens when the
   request finishes, so an unverified token must never reach it. `free_pages` are the pages at the
   end of `req.pages`, in the row's order, that hold no position the request still needs (the
   newest token's included: its K/V goes there next step); never a page of the prefix cache.

When a case fails, the grader names the rule the result breaks and how the package's step
computes that field.

Leave `req`, `drafts` and `targets` as they are: the scheduler appends your tokens one by one
(`_add_token`, which sends each to the detokenizer and runs its own finish check on it), sets
`req.cached_len = kv_len`, and gives `free_pages` back (`CacheManager.trim`, which refuses
pages that are not the end of the row or that belong to the prefix cache).

**Sampling.** With temperature > 0 the engine applies the rule of speculative sampling (accept draft
x with probability p(x), else draw from p without x), which needs the probabilities, so it runs in
the engine (`accept_sampled`). Its targets stop at the first draft it rejects, with the token it
drew there (never equal to that draft). The same step keeps exactly those tokens, as long as it
never reads a target past the first mismatch.

**How others do it.** SGLang's verify step for its speculative algorithms (`EagleVerifyInput.verify`,
under `python/sglang/srt/speculative/`) does the same three things in one function: it accepts
(greedy: the target's argmax, on the GPU; sampling: a rejection-sampling kernel), appends the
accepted tokens to each request one by one with a finish check after each (`req.check_finished()`,
stopping at the first that finishes), and frees the KV slots of the rejected positions. mini-sglang
has no speculative decoding.
"""),
    code("""
from __future__ import annotations

from minisgl_edu.grading import check
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
"""),
    code('''
def verify_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """What the request keeps from one verify step (see the contract above)."""
    ### BEGIN SOLUTION
    ### HINT: see the contract above
    # 1. accept: the drafts the model agrees with, then its own token at the first mismatch
    n = 0
    while n < len(drafts) and drafts[n] == targets[n]:
        n += 1
    run = drafts[:n] + [targets[n]]
    # 2. cut: each new token is checked as if it had come in a step of its own. A stop string of
    # b bytes in UTF-8 spans at most b tokens (a token stands for at least one byte), plus a margin
    # for the token its text begins in and for special tokens, which decode to nothing.
    window = max((len(s.encode("utf-8")) for s in req.stop), default=0) + 4
    tokens: list[int] = []
    reason = None
    for token in run:
        tokens.append(token)
        output = req.output_ids + tokens
        if token in req.eos_ids and not req.ignore_eos:
            reason = "stop"
        elif req.stop and any(s in req.decode(output[-window:]) for s in req.stop):
            reason = "stop"
        elif len(output) >= req.max_new_tokens:
            reason = "length"
        if reason is not None:
            break
    # 3. roll back: valid K/V for every token but the newest; pages for positions 0..total-1
    total = req.prompt_len + len(req.output_ids) + len(tokens)
    keep = max(-(-total // req.page_size), req.prefix_len // req.page_size)
    return VerifyResult(accepted=n, tokens=tokens, finish_reason=reason, kv_len=total - 1, free_pages=req.pages[keep:])
    ### END SOLUTION
'''),
    md("""
Try it on one step. A prompt of 10 tokens and 2 output tokens (the newest at position 11), pages of 4
positions, 5 drafts at positions 12 to 16, so the row holds 5 pages (positions 0 to 19). The model
agrees with the first two drafts and says 99 where the third says 15: the request gets 13, 14, 99,
has 15 tokens, valid K/V at positions 0 to 13, and needs pages for positions 0 to 14: the last page
(16 to 19) held only rejected drafts and goes back.
"""),
    code("""
example = VerifyRequest(
    prompt_len=10,
    output_ids=[11, 12],
    max_new_tokens=50,
    eos_ids={0, 2},
    ignore_eos=False,
    stop=[],
    decode=lambda ids: " ".join(map(str, ids)),
    pages=[7, 3, 9, 4, 8],
    page_size=4,
)
try:
    print(verify_step(example, [13, 14, 15, 16, 17], [13, 14, 99, 16, 17, 18]))
except NotImplementedError as e:
    print("not written yet:", e)
"""),
    md("""
## Check your answer

`check` first runs unit cases on hand-made requests, decoded with the default model's real
tokenizer (a stop string spans tokens there), with pages of 4 positions: every draft accepted and
the bonus, the first mismatch, the shorter targets of a sampled request, an EOS inside the run,
`ignore_eos`, `max_new_tokens` reached by the model's token or by drafts the scheduler should have
capped, stop strings across accepted tokens and across the output and the run, a stop string of
emoji that spans 9 tokens, one with two ignored EOS tokens among its own, "stop" before
"length", `kv_len`, the pages of rejected drafts on one and on two pages, the newest token's page,
a prompt whose first pages belong to the prefix cache, the pages of a cut run, and the inputs left
as they were. Every field is compared with the package's step; when yours differs, the message
names the mistake it looks like.

Then it plugs your function into the real scheduler (`scheduler.verify_fn = verify_step`) with
speculation on, on a tiny model with random weights (milliseconds a step): with the scheduler's own
n-gram drafts; with drafts the grader proposes, wrong at a seeded place so that every number of
accepted drafts happens; and with an EOS, stop strings and `max_tokens` falling inside accepted runs.
The tokens and finish reasons must equal a run without drafts, the cache's bookkeeping must hold
after every step (no page of a rejected draft kept, no page of a valid token given back), every page
must be free or cached at the end, the prefix cache must hold what it holds after the run without
drafts, the same prompts run again on the cached prefixes must give the same tokens, and every
result of your function must equal the package's on the same input.

Each case has a time limit (minutes, far more than a correct answer needs). The answer must be your
own code.
"""),
    code("""
result = check("verify", verify_step)
"""),
    md("""
## Going further

* The scheduler caps the drafts at `max_new_tokens - len(output_ids) - 1`. Why minus one? What
  would it have to do with the pages it reserved at admission if it did not cap them?
* A rejected draft's page goes back to the free list at once, but a rejected draft's K/V on a page
  that is kept is simply overwritten later. Why is that safe, and why could the prefix cache not
  take the request's pages before the step decides `kv_len`?
* With sampling, why must the rule run where the probabilities are (in the engine), while greedy
  acceptance could run anywhere the targets are?
"""),
]
