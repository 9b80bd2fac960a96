from cells import code, md

CELLS = [
    md(r"""
# 12 · Speculative decoding

**Goal:** make one stream faster without changing a single token of its answer. Guess a request's
next few tokens from its own text, check all the guesses in one forward pass, keep the ones the
model agrees with, and give back the KV pages of the rest. See why checking `k` guesses costs
more than computing one token but far less than computing `k + 1` one at a time, and follow the
guesses through the stepper and the page map, for greedy requests. Chapter 13 goes on with
sampling, the requests that do not draft, and the speed of one stream with the feature off and on.
**Expected time:** 25 minutes. How long the cells take depends on how busy the machine is, so
each time below comes with the load average it was measured at (`uptime`: the number of programs
running or ready to run, averaged over the last minutes). On the 2-core course machine, under
`pytest --nbval`, they ran in 14 s at a load average of about 0.6; building the chapter (which
runs every cell once) took 19 s at about 0.8.

Where we are on the path: inside the scheduler's decode step. With
`SchedulerConfig(speculative_algorithm="ngram")` (the server's `--speculative-algorithm ngram`),
`Scheduler._schedule_decode` asks the speculator (`Speculator.drafts` in `scheduler/speculator.py`)
for each running request's guesses
(`propose_ngram` in `scheduler/ngram.py`) and puts them into the batch after the request's newest
token. `Engine.forward_batch` computes every position of the batch and returns the model's own
token at each of them (`engine/verify.py`). Then `Scheduler._process_results` hands each request
that guessed to `Speculator.verified`, which runs the **verify step** (`verify_step` in
`scheduler/verify_step.py`): keep the guesses the model agrees with, cut the run where the
request finishes, and say which KV pages hold only rejected guesses; `CacheManager.trim`
(`kvcache/manager.py`) gives those back. The settings: `speculative_num_draft_tokens` (k, 4 by
default on CPU, 7 on CUDA), `speculative_ngram_max` and `speculative_ngram_min` (the longest and shortest run of
tokens looked up, 4 and 2).

Everything here runs the exact model (float32 weights, `cpu_weights="float32"`) and decodes
greedily unless a cell says otherwise, so the tokens are the same on every machine. Times are not:
the cells that measure them are skipped by the notebook check.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import time

import matplotlib.pyplot as plt
from minisgl_edu import SamplingParams
from minisgl_edu.bench.chat_prompts import EDIT_REQUESTS
from minisgl_edu.runtime import LocalServer

settings = dict(device="cpu", cpu_weights="float32", page_size=4, num_pages=256)
plain = LocalServer("smollm2-135m", **settings)  # speculation off (the default)
spec = LocalServer("smollm2-135m", **settings, speculative_algorithm="ngram")
tok = spec.tokenizer
cfg = spec.config
print("drafts per step:", spec.scheduler.speculator.num_draft_tokens, "| n-gram sizes:", cfg.speculative_ngram_max,
      "down to", cfg.speculative_ngram_min)


def piece(token):
    return repr(tok.decode([token]))
"""),
    md(r"""
## 1 · One stream is bound by reading the weights

A decode step of one request computes one token, and to do so it multiplies one vector of
activations by every weight matrix of the model: each weight is read from memory once and used
for one multiply-add. Memory delivers bytes far slower than the cores can multiply them, so at
batch 1 the step's time is mostly the time to stream the weights through the cores.
"""),
    code(r"""
model = plain.engine.model
params = sum(p.numel() for p in model.parameters())
nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
print(f"{params / 1e6:.1f} M parameters, {nbytes / 1e6:.0f} MB in float32: all read once per decode step")
print(f"about {2 * params / 1e9:.2f} GFLOP per token computed (a multiply and an add per weight)")
"""),
    md(r"""
(The input embedding and the output layer share one matrix in this model, and the output layer
reads all of it, so the count above is what a step reads.)

What if the step computed several positions of the same request instead of one? The weights are
read once either way, and each one is now used for several multiply-adds. Until the arithmetic
catches up with the memory, the extra positions cost far less than a pass each. The cell below measures it: a
100-token prompt is put in the prefix cache first (as a request's earlier tokens are in the KV
cache while it decodes), then each request of 100 + `n` tokens finds those 100 in the cache, and
its one forward pass computes the `n` new positions after them.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
# Any token ids will do for timing: the chat prompt of section 2, twice.
ids = 2 * plain.generate([{"role": "user", "content": EDIT_REQUESTS[0]}], SamplingParams(max_tokens=1)).prompt_token_ids
context = ids[:100]
plain.reset()
plain.generate(context, SamplingParams(max_tokens=1))  # the 100 tokens, now in the prefix cache
fresh = iter(range(1000, 2000))  # a new first token each time: no request finds another's new positions


def forward_ms(n):
    # One step that computes n positions after the 100 cached tokens (a prefill of n tokens).
    plain.submit(context + [next(fresh)] + ids[101 : 100 + n], SamplingParams(max_tokens=1))
    plain.plan()
    t0 = time.perf_counter()
    snap = plain.step()
    seconds = time.perf_counter() - t0
    assert snap.batch.items[0].num_tokens == n  # the cache served the 100 tokens
    return 1000 * seconds


sizes = [1, 2, 3, 5, 9, 17, 33, 65]
ms = {n: min(forward_ms(n) for _ in range(3)) for n in sizes}  # the fastest of 3: least disturbed
for n in sizes:
    print(f"{n:>3} positions: {ms[n]:6.1f} ms  ({ms[n] / ms[1]:4.1f}x one position)")
print("load average over the last 1, 5 and 15 minutes:", os.getloadavg())
plain.reset()

fig, ax = plt.subplots(figsize=(6, 2.8))
ax.plot(sizes, [ms[n] for n in sizes], "o-", label="one pass over n positions")
ax.plot(sizes, [n * ms[1] for n in sizes], ":", color="0.5", label="n passes over one position")
ax.axvline(5, color="0.7", ls="--")
ax.text(5.4, ms[1] / 3, "k+1 = 5: a verify\nof 4 drafts", fontsize=8, va="bottom")
ax.set_xscale("log", base=2)
ax.set_xticks(sizes, [str(n) for n in sizes])
ax.set_xlabel("positions computed (after 100 cached tokens)")
ax.set_ylabel("ms")
ax.set_ylim(0, 1.5 * max(ms.values()))
ax.legend(fontsize=8, loc="upper left")
fig.tight_layout()
plt.show()
"""),
    md(r"""
Read each ratio the cell printed against its `n`. One pass over `n` positions costs far less than
`n` passes over one: the weights are read once, and the extra positions only add arithmetic (and
a little attention). The five positions of a verify (the newest token and 4 drafts) cost more
than one position, but far less than five passes of one. Further right, the time grows faster
with `n` as the arithmetic becomes the limit. Where that starts depends on your CPU (its memory
bandwidth against its cores); a GPU has far more arithmetic per byte of memory.

So if we had a few **guesses** for the next tokens, one pass could compute the model's choice at
each of them for far less than a step per guess. If the guesses are right, the request gets several
tokens in one step. That is speculative decoding (Leviathan, Kalman and Matias, "Fast Inference
from Transformers via Speculative Decoding", 2023; Chen et al., "Accelerating Large Language Model
Decoding with Speculative Sampling", 2023). The guesses are called **drafts**; checking them is
**verifying**.

## 2 · Drafts from the request's own text

Where do guesses come from? The papers use a second, much smaller model. This engine uses no model
at all: **n-gram drafts**, also called prompt lookup. Text that a user asks to be repeated, edited
or quoted continues the way it went the last time its last few tokens appeared. So
`propose_ngram(tokens, k, n_max, n_min)` takes the request's last `n` tokens (prompt and output so
far), finds the most recent earlier place where they occur, and proposes the `k` tokens that
followed there; `n` goes from `n_max` down to `n_min`, and the longest run that matches wins. No
match, no drafts: the request decodes as usual.

Our repetitive request is the first of the benchmark's edit requests (`bench/chat_prompts.py`,
`python -m minisgl_edu.bench.serving --prompt-set edits`): repeat a paragraph with one word
changed. Here is what the model answers, without speculation:
"""),
    code(r"""
edit = [{"role": "user", "content": EDIT_REQUESTS[0]}]
print(EDIT_REQUESTS[0])
base = plain.generate(edit, SamplingParams(max_tokens=80))
print("\nanswer:", base.text)
print(f"\n{len(base.prompt_token_ids)} prompt tokens, {len(base.token_ids)} answer tokens, finish: {base.finish_reason}")
"""),
    md(r"""
A 135M-parameter model does not make the change it was asked for, and strays from the paragraph in
the middle; but most of its answer is the paragraph again. At the first decode step the request's
tokens are the prompt and the answer's first token, `The`. Which drafts does the lookup propose?
"""),
    code(r"""
from minisgl_edu.scheduler.ngram import propose_ngram

prompt_ids, answer = base.prompt_token_ids, base.token_ids
k, n_max, n_min = spec.scheduler.speculator.num_draft_tokens, cfg.speculative_ngram_max, cfg.speculative_ngram_min
tokens = prompt_ids + answer[:1]
drafts = propose_ngram(tokens, k, n_max, n_min)
for n in range(n_max, n_min - 1, -1):  # the search propose_ngram does, shown
    suffix = tokens[-n:]
    hits = [s for s in range(len(tokens) - n) if tokens[s : s + n] == suffix]
    print(f"last {n} tokens {[tok.decode([t]) for t in suffix]}: earlier at {hits or 'nowhere'}")
    if hits:
        break
print("drafts:", [piece(t) for t in drafts])
print("the answer's next tokens:", [piece(t) for t in answer[1 : 1 + k]])
"""),
    md(r"""
The last two tokens, the end of the prompt's `\n\n` and `The`, also occur right before the
paragraph in the prompt; what followed there is the guess, and it is exactly what the model goes
on to say. The same lookup at every position of the answer, against what the model said next:
"""),
    code(r"""
found = first_right = all_right = 0
for m in range(1, len(answer)):
    d = propose_ngram(prompt_ids + answer[:m], k, n_max, n_min)
    if not d:
        continue
    found += 1
    first_right += d[0] == answer[m]
    all_right += d == answer[m : m + len(d)]
print(f"positions {len(answer) - 1}: a draft found at {found}, its first token right at {first_right}, "
      f"all {k} right at {all_right}")
"""),
    md(r"""
Drafts are cheap to make (a search through a few hundred token ids) and often right on a request
like this one. When they are wrong, the check below throws them away: the answer never depends on
the guesses, only the speed does.

## 3 · The verify batch

`Scheduler._schedule_decode` builds the decode batch as in chapter 04, with one difference: a
request that has drafts contributes its newest token **and** its `k` drafts, `k + 1` positions,
in a `ScheduledReq` with `start = total_len - 1`, `num_tokens = 1 + k` and `draft` set. A batch
with drafts in it is a **verify** batch (`Batch.phase == "verify"`); requests without drafts sit
in it with their one decode position, as usual. Pages are reserved for all `k + 1` positions
(`CacheManager.reserve`), before anyone knows which drafts will stay.

For the model, a request's `k + 1` positions are just a chunk of consecutive tokens, like a chunk
of a prompt (chapter 04's chunked prefill): position `start + j` attends to every cached token
and to the chunk's positions up to itself, causally. So the logits at position `j` are the
model's next-token distribution *as if the drafts before `j` were the real text*, which is exactly
what decoding one token at a time would compute if they were. A plain decode keeps the logits of
one row per request; a verify keeps all `k + 1` rows.

The stepper and the page map (chapters 04 and 06) show it. The first **Step** runs the prefill;
the batch after it is a verify batch, with the drafts listed. After the next **Step**, the stepper
shows which drafts were accepted (✓), which rejected (✗), the model's own token (boxed) and the
pages given back, and the page map marks those pages with ✗.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from IPython.display import display
from minisgl_edu.widgets import KVPageMap, SchedulerStepper
from minisgl_edu.widgets.stepper import verify_marks

spec.reset()
stepper = SchedulerStepper(spec, [edit], SamplingParams(max_tokens=80))
page_map = KVPageMap(spec)
display(stepper, page_map)
"""),
    md(r"""
The same, pressed from code (so that it also runs without a browser): one press for the prefill,
then the batch that comes next.
"""),
    code(r"""
stepper.step_button.click()  # the prefill
nxt = stepper.model.snapshot.next_batch
item = nxt.items[0]
print(f"next batch #{nxt.batch_id}: phase {nxt.phase!r}, {nxt.num_tokens} positions")
newest = spec.result(item.uid).token_ids[-1]
for j, t in enumerate([newest] + item.draft):
    role = "the newest token" if j == 0 else f"draft {j - 1}"
    print(f"  position {item.start + j}: {piece(t):<12} ({role})")
"""),
    md(r"""
Five positions: the newest token (`The`, whose K/V has not been computed yet, as at every decode
step) and the four drafts after it. One more press runs this batch:
"""),
    code(r"""
stepper.step_button.click()  # the verify
ran = stepper.model.history[-1].items[0]
print("tokens the request got this step:", [piece(t) for t in ran.tokens])
print("what became of each draft:", [(piece(t), what) for t, what in verify_marks(ran)])
"""),
    md(r"""
Every draft was right, so the request got five tokens from one forward pass: the four drafts and
the model's own token after the last of them. The stepper's view at this point (the HTML the
widget shows, drawn here so that it also appears in a notebook read without a kernel):
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from IPython.display import HTML

HTML(stepper.view.value)
"""),
    md(r"""
## 4 · Greedy acceptance, step by step

With greedy decoding, the model's token at a position is the argmax of its logits there: the
engine returns these `k + 1` "targets" per request, and the verify step compares them with the
drafts. The rule is `accept_greedy`. It is defined in `engine/verify.py`, beside the sampling
rule `accept_sampled`, but the engine does not call it: the verify step does (`verify_step` in
`scheduler/verify_step.py`), on the targets the engine returned. Exercise 8 asks you to write the
verify step, this rule included, without calling `accept_greedy`, so its source is not shown here.
What it returns for three made-up cases (drafts 4, 5, 6, then the four targets):
"""),
    code(r"""
import minisgl_edu.scheduler.verify_step as verify_step_module
from minisgl_edu.engine.verify import accept_greedy

print("accept_greedy is defined in", accept_greedy.__module__,
      "| the verify step calls this one:", verify_step_module.accept_greedy is accept_greedy)
print(accept_greedy([4, 5, 6], [4, 5, 6, 7]), "every draft accepted, then the model's token after the last one")
print(accept_greedy([4, 5, 6], [4, 9, 6, 7]), "the second draft rejected: the model's own token replaces it")
print(accept_greedy([4, 5, 6], [8, 5, 6, 7]), "none accepted: still one token, as a plain decode step gives")
"""),
    md(r"""
`targets[j]` is the model's argmax at position `j`. Draft `j` is kept while it equals it. At the
first draft that differs, the model's own token there is the right next token (its position saw
only accepted tokens before it), and the positions after it are worthless: they were computed
after a wrong token. When every draft is accepted, the last position gives one more token for
free. So a verify step gives between 1 and `k + 1` tokens, and always exactly the tokens that
greedy decoding one at a time would have given.

Run the request to its end, one step at a time, keeping the stepper's plan before each step
(the pages reserved for the next batch) and the server's snapshot right after it; then list what
every step of the request did (✓ accepted, ✗ rejected, ✓· accepted but after the request
finished):
"""),
    code(r"""
after = []  # the snapshot right after each step (the on_step callbacks get it)
spec.on_step.append(after.append)
steps = []  # (the plan before the step, the snapshot after it)
while not stepper.model.done:
    before = stepper.model.snapshot
    stepper.step_button.click()
    steps.append((before, after[-1]))
spec.on_step.remove(after.append)

result = spec.result(stepper.model.uids[0])
print("same tokens as without speculation:", result.token_ids == base.token_ids)
SIGN = {"accepted": "✓", "rejected": "✗", "after finish": "✓·"}
for batch in stepper.model.history:
    it = batch.items[0]
    if not it.is_decode:
        print(f"batch {batch.batch_id:>2}: prefill of {it.num_tokens} tokens  -> {piece(it.tokens[0])}")
    elif not it.draft:
        print(f"batch {batch.batch_id:>2}: decode, no drafts       -> {piece(it.tokens[0])}")
    else:
        marks = verify_marks(it)
        drafted = " ".join(f"{piece(t)}{SIGN[what]}" for t, what in marks if what != "model")
        model_token = [piece(t) for t, what in marks if what == "model"]
        print(f"batch {batch.batch_id:>2}: {len(it.accepted)}/{len(it.draft)} accepted  {drafted}"
              f"  | model: {model_token[0] if model_token else '(finished before it)'}")
"""),
    md(r"""
One verify with a rejection, as a table: the draft at each position, the model's token there, and
whether the draft stays. Only the positions up to the first rejection are compared; after it, the
model's argmax saw a wrong token, and nobody looks at it.
"""),
    code(r"""
def first_with(pred):  # the first verify of the run that `pred` likes
    return next(b.items[0] for b in stepper.model.history if b.items[0].draft and pred(b.items[0]))


it = first_with(lambda it: it.accepted and len(it.draft) - len(it.accepted) >= 2)
n = len(it.accepted)
print(f"{'position':<9} {'draft':<14} {'model':<14} accepted?")
for j, d in enumerate(it.draft):
    model_token = piece(it.tokens[j]) if j <= n else "(not compared)"
    verdict = "yes" if j < n else "no: the model's token is kept" if j == n else "no: after a rejection"
    print(f"{it.start + 1 + j:<9} {piece(d):<14} {model_token:<14} {verdict}")
print("kept this step:", [piece(t) for t in it.tokens])
"""),
    md(r"""
The static picture of the whole run: one column per step; a verify cell says how many of its
drafts were accepted. The request got its answer tokens in far fewer steps than it has tokens.
"""),
    code(r"""
n_steps = len(stepper.model.history)
print(f"{len(result.token_ids)} answer tokens in {n_steps} steps (1 prefill + {n_steps - 1} decode or verify); "
      f"without speculation: 1 + {len(base.token_ids) - 1}")
fig = stepper.figure()
plt.show()
"""),
    md(r"""
## 5 · The pages given back

Before a verify step, the scheduler reserved pages for all `k + 1` positions. After it, the
positions of rejected drafts hold K/V that no request will ever read: the request's length went
back (`req.total_len` counts only the tokens it kept), so the next step computes its newest
token's K/V over the first rejected position, and so on. A page that holds *only* rejected
positions is given back to the free list at once: the verify step lists those pages, and
`Speculator.verified` passes them to `CacheManager.trim`. Here, page size 4, the first step that
gave a page back:
"""),
    code(r"""
i = next(i for i, (_, snap) in enumerate(steps) if snap.batch.items[0].freed_pages)
before, snap = steps[i]
it = snap.batch.items[0]
print(f"batch {snap.batch.batch_id}: positions {it.start}..{it.end - 1} computed; "
      f"{len(it.accepted)} of {len(it.draft)} drafts accepted, {len(it.tokens)} token(s) kept")
print("row before the step:", before.pages.rows[it.uid], "| free pages:", before.free_pages)
print("row after the step: ", snap.pages.rows[it.uid], "| free pages:", snap.free_pages)
print("given back:", it.freed_pages)
"""),
    md(r"""
Before the step, the row ended with a page that only the drafts' positions reached. After it, the
request's tokens end before that page, so it went back. (Positions of rejected drafts in a page
the request keeps are simply overwritten by the next steps.) On the page map, the pages before
the step and after it, with the page given back marked:
"""),
    code(r"""
from minisgl_edu.widgets.pagemap import plot_page_map

fig, axes = plt.subplots(1, 2, figsize=(13, 2.4))
plot_page_map(before.pages, ax=axes[0], max_pages=48, title=f"before batch {snap.batch.batch_id}: pages reserved for the drafts")
plot_page_map(snap.pages, ax=axes[1], max_pages=48, freed={it.uid: it.freed_pages},
              title=f"after it: {len(it.freed_pages)} page given back (x)")
plt.show()
"""),
    md(r"""
On the live page map above, move the slider to that step to see the same mark.

## 6 · The prefix cache never sees a rejected draft

When the request finished, its full pages went into the prefix cache (chapter 06), keyed by its
token ids: the prompt and the answer, the tokens it *kept*. A rejected draft is never one of them,
and its K/V sit only in pages that were given back or overwritten. Check: the cache matches the
prompt and the answer as far as whole pages go, and a sequence that continues with a rejected
draft instead matches no further than the tokens before that draft.
"""),
    code(r"""
cache = spec.scheduler.cache.prefix_cache
ps = spec.scheduler.cache.page_size
full = prompt_ids + result.token_ids
_, pages = cache.match_prefix(full)
print(f"prompt + answer: {len(full)} tokens, {len(pages) * ps} of them found in the cache")

it = first_with(lambda it: len(it.accepted) < len(it.draft))
at = it.start + 1 + len(it.accepted)  # the position of the first rejected draft
wrong = full[:at] + it.draft[len(it.accepted) :]
_, pages = cache.match_prefix(wrong)
print(f"the same up to position {at}, then the rejected drafts {[piece(t) for t in it.draft[len(it.accepted):]]}: "
      f"{len(pages) * ps} tokens found (whole pages before position {at})")
"""),
    md(r"""
The same request again finds its prompt in the cache and gives the same answer:
"""),
    code(r"""
again_uid = spec.submit(edit, SamplingParams(max_tokens=80))
spec.run_until_idle()
again = spec.result(again_uid)
print("same answer:", again.token_ids == base.token_ids,
      "| prefix hit:", [e.data["tokens"] for e in spec.trace(again_uid) if e.event == "prefix_hit"])
"""),
    md(r"""
## 7 · Finishing inside an accepted run

A verify step can hand a request several tokens at once, but a request must stop exactly where it
would have stopped one token at a time. So the verify step runs the finish check (`check_finish`,
chapter 08) after each token of the accepted run, as if it had come in a step of its own, and
cuts the run at the first token that finishes the request; the rest are dropped, even if the
model accepted them. The last step of the run above:
"""),
    code(r"""
last = steps[-1][1].batch
it = last.items[0]
print("finished:", last.finished)
print("drafts:", [(piece(t), what) for t, what in verify_marks(it)])
print("tokens sent to the client:", [piece(t) for t in it.tokens])
"""),
    md(r"""
The answer's last sentence ended like the prompt's paragraph, so the lookup proposed what followed
it there: the end of the user's turn in the chat template (`<|im_end|>`, this model's EOS), the
newline after it, and the start of the next turn. The model agreed with the first two. EOS
finished the request, so the newline, accepted by the model, is never sent ("after finish"). The
stepper shows it as a grey ✓.

`max_tokens` is handled before the step instead: `Speculator.drafts` proposes at most
`max_tokens - tokens so far - 1` drafts, so the drafts and the model's own token always fit in
`max_tokens` (and in the pages reserved for the request when it was admitted). With
`max_tokens=8`:
"""),
    code(r"""
spec.reset()
short_uid = spec.submit(edit, SamplingParams(max_tokens=8))
while not spec.is_idle():
    snap = spec.step()
    it = snap.batch.items[0]
    out = spec.result(short_uid).token_ids
    print(f"batch {snap.batch.batch_id}: {len(it.draft)} drafts, {len(it.tokens)} token(s) kept, "
          f"{len(out)} so far {snap.batch.finished or ''}")
print("the first 8 tokens of the full answer:", out == base.token_ids[:8])
"""),
    md(r"""
## Summary

* At batch 1 a decode step is bound by reading the weights; computing `k + 1` positions instead of
  one costs far less than `k + 1` steps, but more than one: a verify step pays off only when
  enough of its drafts are right.
* N-gram drafts (prompt lookup) guess the next tokens from the request's own text: free to make,
  good on text that repeats, poor on fresh prose.
* A verify batch computes each drafting request's newest token and its drafts, causally, in one
  pass. Greedy acceptance keeps the drafts up to the first disagreement, plus the model's own
  token: between 1 and `k + 1` tokens, exactly the tokens of plain greedy decoding.
* Rejected positions are dead: the request's length goes back, pages holding only rejected drafts
  return to the free list, and the prefix cache only ever stores kept tokens.
* Finishing is checked token by token through an accepted run; `max_tokens` caps the drafts.

Chapter 13 drops the greedy assumption: speculative sampling at a temperature, the requests that
never draft, and the speed of one stream off and on, with how SGLang and mini-sglang compare.

## Exercises

1. Exercise 8 (`exercises/08_verify.ipynb`): write the verify step: from a request's drafts and
   the model's tokens at its `k + 1` positions, the tokens it keeps, where a finish cuts them, and
   which KV positions and pages go back.
2. Run the edit request with `speculative_ngram_min=1`: how many more drafts are proposed, and how
   many more accepted?
3. Send the edit request and "What is KV Cache?" at the same time to `spec`. Which batches are
   verify batches, and does the chat question slow the edit request down?
"""),
]
