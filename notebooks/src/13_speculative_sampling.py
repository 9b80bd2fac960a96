from cells import code, md

CELLS = [
    md(r"""
# 13 · Speculative decoding, continued: sampling, and when drafts pay

**Goal:** keep speculative decoding exact when a request samples at a temperature, see when drafts
do not pay (and what the engine does about it), and measure one stream's speed with the feature
off and on.
**Expected time:** 20 minutes, after chapter 12. How long the cells take depends on how busy the
machine is: the timing cells print the load average they ran at (`uptime`: the number of programs
running or ready to run, averaged over the last minutes), and the notebook check skips their
output. On the 2-core course machine, under `pytest --nbval`, the chapter ran in 36 s at a load
average of about 0.7.

Where we are on the path: the same as in chapter 12, inside the scheduler's decode step with
`SchedulerConfig(speculative_algorithm="ngram")`. Chapter 12 followed greedy requests: the
speculator proposes `k` drafts from the request's own text (`propose_ngram`), one verify pass
computes the model's token at each of the `k + 1` positions, and the verify step
(`verify_step`) keeps the drafts up to the first disagreement plus the model's own token, and
gives back the pages of the rest. This chapter drops the greedy assumption.

The same two engines as chapter 12, the exact model (float32 weights), one with speculation off
and one with it on, and its repetitive request (repeat a paragraph with one word changed):
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import statistics
import time

import torch
from minisgl_edu import SamplingParams
from minisgl_edu.bench.chat_prompts import EDIT_REQUESTS
from minisgl_edu.runtime import LocalServer

settings = dict(device="cpu", cpu_weights="float32", page_size=4, num_pages=256)
plain = LocalServer("smollm2-135m", **settings)  # speculation off (the default)
spec = LocalServer("smollm2-135m", **settings, speculative_algorithm="ngram")
edit = [{"role": "user", "content": EDIT_REQUESTS[0]}]
print("drafts per step:", spec.scheduler.speculator.num_draft_tokens)
"""),
    md(r"""
## 1 · With temperature: keep the model's distribution

With sampling, "is the draft the model's token?" has no single answer: the model's token is a
random draw. Accepting a draft whenever the model *could* have said it would over-produce the
drafts. The rule that keeps every emitted token distributed exactly as sampling without drafts
is speculative sampling (Leviathan et al. 2023, Algorithm 1; Chen et al. 2023). For a draft
distribution `q` and the model's `p` at a position: accept the draft `x` with probability
`min(1, p(x) / q(x))`; on rejection, draw from `max(0, p - q)`, normalised, and stop there. An
n-gram draft is one fixed token, `q(x) = 1`, so this becomes: accept `x` with probability `p(x)`;
otherwise draw from `p` with `x` removed. `accept_sampled` in `engine/verify.py` does that, where
`p` is the sampler's distribution after the logits chain, temperature, top-k and top-p. It needs
the probabilities, so it runs in the engine; the targets it returns stop at the first rejected
draft (with the draw that replaced it), and the verify step's comparison then keeps exactly them.

Why it is exact, for the first position: a token `y ≠ x` comes out only after a rejection,
with probability `(1 - p(x)) · p(y) / (1 - p(x)) = p(y)`, and `x` itself with probability
`p(x)`. A check on a small distribution, with a likely draft and an unlikely one, against a rule
that accepts any draft the model gives at least 10%:
"""),
    code(r"""
from minisgl_edu.engine.verify import accept_sampled

p = torch.tensor([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]])  # the model's distribution at two positions


def first_token_freq(rule, draft, draws=10_000):
    gen = torch.Generator().manual_seed(0)
    counts = torch.zeros(3)
    for _ in range(draws):
        counts[rule([draft], p, gen)[0]] += 1
    return [round(c / draws, 2) for c in counts.tolist()]


def generous(drafts, probs, gen):  # wrong: keep any draft the model gives at least 10%
    if probs[0, drafts[0]] >= 0.1:
        return drafts + [int(torch.multinomial(probs[1], 1, generator=gen))]
    return [int(torch.multinomial(probs[0], 1, generator=gen))]


print("the model's p at position 0:", [round(x, 2) for x in p[0].tolist()])
for draft in (0, 2):
    print(f"draft {draft}: accept_sampled gives {first_token_freq(accept_sampled, draft)}, "
          f"the generous rule {first_token_freq(generous, draft)}")
"""),
    md(r"""
`accept_sampled` reproduces `p` (up to the noise of 10,000 draws) whatever the draft; the generous
rule turns every draft into a certainty. (`tests/test_speculative_rules.py` runs the same check on the
first and the second token with a stated tolerance.)

The random numbers come from the request's own generator (`SamplingParams.seed`), so a seeded
request gives the same tokens every time it runs with speculation on. Not the same tokens as with
speculation off: the verify draws its random numbers in a different order (one for each draft's
accept test, then one draw), so the two are different samples of the same distribution.
"""),
    code(r"""
seeded = SamplingParams(temperature=0.8, seed=1234, max_tokens=40)
runs = []
for srv in (spec, spec, plain):
    srv.reset()  # no prefix hit: each run computes the whole prompt
    runs.append(srv.generate(edit, seeded))
first, second, off = runs
print("with speculation, twice, same seed: same tokens:", first.token_ids == second.token_ids)
print("the same seed without speculation: same tokens:", first.token_ids == off.token_ids)
print("sampled answer:", first.text)
"""),
    md(r"""
## 2 · When drafts do not pay

A verify of `k` drafts computes `k` extra positions. At batch 1 that is far cheaper than `k`
steps (chapter 12, section 1), but not free, and it costs more once a large batch makes the step
compute-bound. On ordinary questions
the lookup finds fewer matches, and the matches it finds are rejected more often. The seed
chapter's question, "What is KV Cache?", with speculation off and on:
"""),
    code(r"""
question = [{"role": "user", "content": "What is KV Cache?"}]
kv_params = SamplingParams(max_tokens=128)
kv_seconds = {}  # printed in section 3, with the other timings
plain.reset()
t0 = time.perf_counter()
kv_off = plain.generate(question, kv_params)
kv_seconds["off"] = time.perf_counter() - t0
spec.reset()
kv_steps = []
spec.on_step.append(kv_steps.append)
t0 = time.perf_counter()
kv_on = spec.generate(question, kv_params)
kv_seconds["on"] = time.perf_counter() - t0
spec.on_step.remove(kv_steps.append)

verifies = [s.batch.items[0] for s in kv_steps if s.batch.has_drafts]
print("same answer:", kv_on.token_ids == kv_off.token_ids, "|", len(kv_on.token_ids), "tokens, finish:", kv_on.finish_reason)
print(f"{len(kv_steps)} steps with speculation ({len(verifies)} verify), {len(kv_off.token_ids)} without")
print(f"drafts proposed: {sum(len(v.draft) for v in verifies)}, accepted: {sum(len(v.accepted) for v in verifies)}, "
      f"verifies that accepted none: {sum(not v.accepted for v in verifies)}")
print("answer:", kv_on.text)
"""),
    md(r"""
The same answer, token for token, in fewer steps, but most drafts were rejected. Each verify that
accepted nothing cost `k` positions for nothing. So a request whose drafts keep failing stops
drafting for a while: after `m` verifies in a row that accepted nothing, it proposes no drafts for
`backoff(m)` decode steps (`scheduler/ngram.py`), and one accepted draft resets the count.
"""),
    code(r"""
from minisgl_edu.scheduler.ngram import MAX_PAUSE, backoff

print("pause after m failed verifies in a row:", {m: backoff(m) for m in range(1, 7)}, "| at most", MAX_PAUSE)
"""),
    md(r"""
**Requests that never draft.** A request with a grammar (JSON schema, regex, EBNF) or with
repetition, frequency or presence penalties gets no drafts (`Speculator.guess`). Their logits at
draft position `j` would have to be processed as if drafts `0..j-1` were already accepted: the
grammar's mask after those tokens (the matcher advanced through the drafts and rolled back at the
first rejection), the penalties counting them. Verifying without that would compare the drafts
with the wrong distribution; doing it means state that moves ahead and back per position. This
engine keeps it simple and lets those requests decode one token per step, in the same batches
as the requests that draft:
"""),
    code(r"""
spec.reset()
pen = spec.submit(edit, SamplingParams(max_tokens=30, presence_penalty=0.5))
other = spec.submit(edit, SamplingParams(max_tokens=30))
phases, drafted = [], set()
while not spec.is_idle():
    snap = spec.step()
    phases.append(snap.batch.phase)
    drafted |= {it.uid for it in snap.batch.items if it.draft}
print("batch phases:", " ".join(phases))
print("uids that drafted:", sorted(drafted), f"(uid {pen} has a presence penalty)")
"""),
    md(r"""
## 3 · The speed of one stream, off and on

The repetitive request at one stream, with speculation off and on, timed end to end (prefill
included) on your CPU: each twice, and the faster run counts. The cell also times each decode and
each verify step of the request with speculation on, and prints the times of section 2's two runs
of the chat question (one run each).
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
def timed(srv, prompt, sp, step_ms=None):
    srv.reset()
    uid = srv.submit(prompt, sp)
    t0 = time.perf_counter()
    while not srv.is_idle():
        t = time.perf_counter()
        snap = srv.step()
        if step_ms is not None and snap.batch is not None and snap.batch.phase in ("decode", "verify"):
            step_ms[snap.batch.phase].append(1000 * (time.perf_counter() - t))
    return srv.result(uid), time.perf_counter() - t0


speed = {}
step_ms = {"decode": [], "verify": []}
for srv, mode in [(plain, "off"), (spec, "on")]:
    runs = [timed(srv, edit, SamplingParams(max_tokens=80), step_ms if srv is spec else None) for _ in range(2)]
    res, seconds = min(runs, key=lambda r: r[1])
    speed["edit request", mode] = (res.token_ids, seconds)
speed["What is KV Cache?", "off"] = (kv_off.token_ids, kv_seconds["off"])
speed["What is KV Cache?", "on"] = (kv_on.token_ids, kv_seconds["on"])
for name in ("edit request", "What is KV Cache?"):
    for mode in ("off", "on"):
        tokens, seconds = speed[name, mode]
        print(f"{name:<18} speculation {mode:<3}: {len(tokens):>3} tokens in {seconds:5.2f} s, "
              f"{len(tokens) / seconds:5.1f} tokens/s")
    print(f"{'':<18} on / off: {speed[name, 'off'][1] / speed[name, 'on'][1]:.2f}x the tokens/s")
print(f"edit request, speculation on: median decode step {statistics.median(step_ms['decode']):.1f} ms, "
      f"median verify step {statistics.median(step_ms['verify']):.1f} ms")
print("load average over the last 1, 5 and 15 minutes while this ran:", os.getloadavg())
"""),
    code(r"""
for name in ("edit request", "What is KV Cache?"):
    print(f"{name}: the same token ids off and on:", speed[name, "off"][0] == speed[name, "on"][0])
    assert speed[name, "off"][0] == speed[name, "on"][0]
"""),
    md(r"""
Compare the lines the timing cell printed, and the load average it printed with them. A verify
step costs more than a decode step, and more than chapter 12's pass over 5 positions (its section 1): it computes
the logits at all `k + 1` positions (a prefill keeps only the last one's) and runs the verify step
on the host. While a core is free for the engine, that is far less than the up to five decode
steps a verify replaces, so the edit request gains, by about the ratio of tokens to steps seen in
chapter 12's section 4, less what the verifies cost beyond a decode step. The chat question saves far fewer
steps (section 2: 110 steps instead of 128), so it gains little or loses, depending on what a
verify costs on the machine at the time.

When every core is taken, the timings say more about the machine than about speculation. One
build of the course on the 2-core course machine ran this cell at a load average of 13 to 14
(six or seven programs wanting each core): the median decode step took 747 ms and the median
verify step 3.8 s, 5.1 times as long, and speculation made both requests slower, the edit request
0.79x and the chat question 0.65x as fast.
Rerun the cell when your machine is quieter, and compare the load averages.

`docs/benchmarks.md` has the measured figures on the course CPU and on a GPU, with commands
(`python -m minisgl_edu.bench.serving --prompt-set edits --concurrency 1` against a server started
with and without `--speculative-algorithm ngram`).

## 4 · In SGLang and mini-sglang

| | here | SGLang | mini-sglang (reference commit) |
|---|---|---|---|
| turn it on | `--speculative-algorithm ngram`, `SchedulerConfig.speculative_algorithm` | `--speculative-algorithm` `NGRAM`, `EAGLE`, `EAGLE3`, `STANDALONE` (a small draft model) | none |
| drafts per step | `--speculative-num-draft-tokens` (4 on CPU, 7 on CUDA) | `--speculative-num-draft-tokens`, and for EAGLE a tree (`--speculative-num-steps`, `--speculative-eagle-topk`) | none |
| the verify pass | a `Batch` with phase `"verify"`, `k + 1` positions per request; on CUDA, graphs captured for verify batches (`engine/cuda_graph.py`) | `ForwardMode.TARGET_VERIFY`, captured in CUDA graphs | none |
| acceptance | greedy: `accept_greedy`, defined in `engine/verify.py` and called by the verify step (`verify_step`, `scheduler/verify_step.py`); sampling: `accept_sampled`, in the same file, called by the engine (`verify`, inside `verify_batch`) | tree verification kernels (greedy and sampling) | none |
| rejected K/V | `verify_step` lists the pages of rejected drafts, `CacheManager.trim` returns them to the free list | the slots of rejected tokens go back to the allocator after the verify | none |

mini-sglang's source at the reference commit has no drafts, no verify mode and no speculative
option (`docs/minisglang_map.md`, its speculative row). SGLang's `NGRAM` drafts come from a
cache of token sequences that every running request feeds (so one request can draft from
another's text), and it proposes a small tree of alternatives per step, checked with a tree
attention mask, where this engine proposes one chain. With speculation on, this engine's overlap
loop (chapter 09) lets a batch land before it schedules the next when that batch verified drafts
or the next one would carry some: how many tokens a verify gives is known only when it lands.

## Summary

* With temperature, speculative sampling (accept the draft `x` with probability `p(x)`, else draw
  from `p` without `x`) keeps the model's distribution; seeded requests reproduce, but are not the
  same sample as without speculation.
* On fresh prose n-gram drafts are rarely right: a request whose drafts keep failing pauses
  drafting; requests with a grammar or penalties never draft.
* A verify step costs more than a decode step: one stream gains when enough drafts are accepted
  and a core is free for the engine, and loses on a busy machine.

## Exercises

1. Set `speculative_num_draft_tokens` to 1, 2 and 8 for the edit request (a new
   `LocalServer(..., speculative_algorithm="ngram", speculative_num_draft_tokens=...)`): how do the
   number of steps and the tokens/s change? Where does chapter 12's curve of section 1 say the gain
   must stop?
2. In section 1, replace the generous rule by "sample `y` from `p`; keep the draft if `y` is the
   draft, else emit `y`". Is the first token's distribution right? Why is this the same rule as
   `accept_sampled` for a draft that is one fixed token?
3. Your verify step of exercise 8 (`exercises/08_verify.ipynb`) compares drafts with the model's
   tokens as if the request were greedy. With temperature, `accept_sampled` gives it targets that
   stop at the first rejected draft, with the draw that replaced it. Why does the same verify step
   then keep exactly the tokens speculative sampling chose, and never a draft after a rejection?
"""),
]
