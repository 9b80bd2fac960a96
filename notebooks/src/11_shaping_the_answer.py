from cells import code, md

CELLS = [
    md(r"""
# 11 · Shaping the answer

**Goal:** use the request fields that change *which* tokens come out, and see where each one acts
inside the engine: logprobs (how sure the model was), `logit_bias`, several answers to one prompt
(`n`) that share the prompt's KV pages, JSON under a schema (a grammar that masks every step),
and the repetition, frequency and presence penalties. Then put them in the one order the engine
applies them, and map each to its OpenAI field and its SGLang name.
**Expected time:** 40 minutes (the cells ran in 20 s under `pytest --nbval` on the 2-core course
machine at a load average of about 2, and in 6 minutes while other work pushed it to 7-9).

Where we are on the path: inside `Engine.forward_batch`, between the model's logits and the
sampler (chapter 05). The sampler first hands the logits to the **logits chain**
(`Sampler.process_fn`, by default `process_logits` in `engine/logits_chain.py`); the engine takes
logprobs from the logits *as the model gave them* (`take_logprobs` in `engine/logprobs.py`). Two
features reach further: a grammar (`engine/grammar.py`) is compiled when the request reaches the
scheduler and follows each sampled token (`StructuredOutput` in `scheduler/structured.py`, which
the scheduler calls on arrival and for each result); `n` answers are `n` requests that the
tokenizer worker makes from one `TokenizeMsg` and that the scheduler admits so they share the
prompt's pages (`scheduler/prompt_sharing.py`, on the prefix cache's own `insert`, `lock` and
`unlock`). Every field is in `SamplingParams` (`core.py`).
"""),
    md(r"""
## 1 · How sure was the model? Logprobs

With `logprobs=True` every generated token comes back with its log-probability, and with
`top_logprobs=k` the `k` most likely tokens at that position, in OpenAI's chat shape. We run the
engine in float32 (`cpu_weights="float32"`, the exact model), greedy, so the answer is the same on
every run.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
import math

import matplotlib.pyplot as plt
import numpy as np
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu", cpu_weights="float32", page_size=8, num_pages=64)
question = [{"role": "user", "content": "What is KV Cache?"}]
r = srv.generate(question, SamplingParams(max_tokens=20, logprobs=True, top_logprobs=5))
print(repr(r.text), r.finish_reason)
print("token ids:", r.token_ids)
entry = r.logprobs[3]
print("one entry has", sorted(entry), "| token", repr(entry["token"]), "bytes", entry["bytes"],
      "|", len(entry["top_logprobs"]), "alternatives, each with", sorted(entry["top_logprobs"][0]))
"""),
    md(r"""
The model's guess is wrong: in an LLM server, KV stands for *key* and *value*. The logprobs show
where it went wrong. Each column below is one generated token; the five cells are the five most
likely tokens at that position, most likely at the top, coloured by probability. Greedy decoding
took the top one every time.
"""),
    code(r'''
def draw_top_logprobs(entries, title):
    """A column per generated token: its top alternatives (rank 1 at the top), coloured by probability."""
    k = len(entries[0]["top_logprobs"])
    probs = np.array([[math.exp(t["logprob"]) for t in e["top_logprobs"]] for e in entries]).T
    fig, ax = plt.subplots(figsize=(13, 3.2))
    ax.imshow(probs, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for x, e in enumerate(entries):
        for y, t in enumerate(e["top_logprobs"]):
            label = t["token"].strip() or repr(t["token"])
            label = label if len(label) <= 7 else label[:6] + "…"
            ax.text(x, y, label, ha="center", va="center", fontsize=6.5,
                    color="white" if probs[y, x] > 0.6 else "black")
    ax.set_xticks(range(len(entries)), [repr(e["token"])[1:-1] for e in entries], rotation=60, fontsize=7)
    ax.set_yticks(range(k), [f"rank {i + 1}" for i in range(k)], fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    plt.show()


draw_top_logprobs(r.logprobs, "top-5 next tokens at each position (colour: probability)")
'''),
    md(r"""
Where the top cell is pale, the model hesitated. The same positions as text (the token it took
had a probability below 60%), without the floats, so that this output is the same on any CPU:
"""),
    code(r"""
for i, e in enumerate(r.logprobs):
    if math.exp(e["logprob"]) < 0.6:
        others = [t["token"] for t in e["top_logprobs"][1:]]
        print(f"position {i:>2}: took {e['token']!r:<12} others {others}")
"""),
    md(r"""
At position 0 the answer could have started with `A`; at position 3 the model began the
expansion of KV with `K`, with `Key` third; at position 4 `ernel` (Kernel) beat `iller` (Killer)
by a hair, and both had less than a 10% chance. A confident-sounding wrong answer was a string of
close calls.

### Nudging a token: `logit_bias`

`logit_bias` adds a number to the logit of chosen token ids, at every position (OpenAI allows
-100 to 100; -100 in practice bans a token). Pushing `Key` up by 2, or banning `ernel`:
"""),
    code(r"""
tok = srv.tokenizer
key, ernel = tok.convert_tokens_to_ids("Key"), tok.convert_tokens_to_ids("ernel")
print("token ids: Key", key, "| ernel", ernel)
for bias in ({key: 2.0}, {ernel: -100.0}):
    b = srv.generate(question, SamplingParams(max_tokens=16, logit_bias=bias, logprobs=True, top_logprobs=5))
    print(f"{str(bias):<16} -> {b.text!r}")
e = b.logprobs[4]  # the position where `ernel` used to win
print("with `ernel` banned, position 4 took", repr(e["token"]), "and its raw top-5 still starts with",
      repr(e["top_logprobs"][0]["token"]))
"""),
    md(r"""
A bias of 2 was enough to tip position 3 to `Key`, and from there the model went on to `Value`
by itself. The last line is the first hint of a rule this chapter comes back to: the logprobs are
those of the model's **raw** distribution, before the bias, so the banned `ernel` still appears
there as the most likely token.

## 2 · Four answers, one prompt: `n`

`SamplingParams(n=4)` asks for four answers. The tokenizer worker encodes the prompt once and
sends four `UserMsg`s (the uid returned by `submit` and the three after it). Computing the same
prompt four times would waste work, so the other three wait for the first one's prefill
(`Req.prompt_leader`; `prompt_sharing.waits`, asked by `Scheduler._schedule_prefill`). Right after that prefill,
`prompt_sharing.prompt_done` hands the first answer's full prompt pages to the prefix cache, and
the three others are admitted one step later with a prefix hit. (SGLang reaches the same end from
its tokenizer manager: it first sends the prompt alone as a request with `max_new_tokens=0`, a
prefill that only fills the cache, waits for it, then sends the n samples.)

Chapter 06 showed that this engine normally puts a prompt into the prefix cache only when its
request finishes; `n > 1` is the one place where it shares a prompt right after its prefill. We
sample at temperature 0.8 so the answers differ, and set `ignore_eos` so that each runs its full
`max_tokens` (the pages below do not depend on what was sampled). `srv.reset()` empties the cache.
"""),
    code(r"""
srv.reset()
first = srv.submit(question, SamplingParams(n=4, max_tokens=10, temperature=0.8, ignore_eos=True))
uids = list(range(first, first + 4))
for _ in range(3):
    snap = srv.step()
    print(f"step {snap.steps}: {snap.batch.phase:<7} (uid: tokens computed from position)",
          ", ".join(f"{it.uid}: {it.num_tokens} from {it.start}" for it in snap.batch.items))
    for u in uids:
        req = srv.scheduler.reqs[u]
        print(f"    uid {u}: {snap.requests[u].status:<10} prefix hit {req.prefix_len:>2} tokens, pages {snap.requests[u].pages}")
"""),
    md(r"""
Step 1 ran only uid 0's prefill (its prompt is 36 tokens: four full pages of 8 and 4 more). Step
2 ran the three others' prefills: each found the first 32 tokens in the cache (the four full
pages 0-3, now in four rows) and computed only the last 4, into a page of its own, because the
half-filled fifth page is never shared. Step 3 is the first decode step of all four. The page map
after step 3 (the number on a page: how many requests use it):
"""),
    code(r"""
from minisgl_edu.widgets.pagemap import plot_page_map

plot_page_map(snap.pages, max_pages=16, title="after step 3: pages 0-3 hold the prompt once, for all four answers")
plt.show()
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
srv.run_until_idle()  # sampled at temperature 0.8 without a seed: the texts change from run to run
for u in uids:
    print(u, repr(srv.result(u).text))
"""),
    md(r"""
How many prompt tokens did the engine compute, with `n=4` and with the same prompt sent as four
separate requests? (Four requests sent together to an empty cache share nothing: chapter 06.)
"""),
    code(r"""
def prompt_tokens_computed(server):
    return sum(e.data["tokens"] for e in server.tracer.events()
               if e.event == "scheduled" and e.data["phase"] == "prefill")


srv.reset()
srv.submit(question, SamplingParams(n=4, max_tokens=1))
srv.run_until_idle()
print("n=4:               ", prompt_tokens_computed(srv), "prompt tokens computed")
srv.reset()
for _ in range(4):
    srv.submit(question, SamplingParams(max_tokens=1))
srv.run_until_idle()
print("4 separate requests:", prompt_tokens_computed(srv), "prompt tokens computed")
srv.scheduler.cache.check()
"""),
    md(r"""
## 3 · JSON under a schema: a grammar masks every step

`json_schema` (or `regex`, or `ebnf`) makes the engine produce only text that the grammar accepts.
When the request reaches the scheduler, `StructuredOutput.attach` compiles the schema with
**XGrammar** against the tokenizer's vocabulary (`GrammarCompiler.compile`; compiled grammars are
cached by their text) and keeps a matcher on the request (`Req.grammar.matcher`). Before each token of that request is
picked, the matcher fills a bitmask, one bit per token of the vocabulary, and the chain sets
every forbidden logit to -inf (`grammar_mask`); after the token is picked,
`StructuredOutput.finish_reason` advances the matcher with it. When the JSON is complete, the only token allowed is EOS.

The model does not see the schema: only the mask does. A small model needs the mask; a prompt that
describes the fields helps the content.
"""),
    code(r"""
import jsonschema

schema = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 80},
        "confidence": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}
j = srv.generate(question, SamplingParams(max_tokens=60, json_schema=json.dumps(schema), logprobs=True))
print(j.text)
print(j.finish_reason, "after", len(j.token_ids), "tokens")
obj = json.loads(j.text)
jsonschema.validate(obj, schema)  # raises if the answer breaks the schema
print("valid:", obj["confidence"], "|", len(obj["answer"]), "characters of answer")
"""),
    md(r"""
How much choice did the grammar leave at each step? We replay the answer's tokens through a fresh
matcher for the same schema and count the allowed tokens (the set bits of the bitmask, as
`xgrammar.allocate_token_bitmask` and `GrammarMatcher.fill_next_token_bitmask` produce it, the
calls `Grammar.fill_mask` makes in the engine):
"""),
    code(r"""
import torch
import xgrammar as xgr

vocab = srv.scheduler.vocab_size
grammar = srv.scheduler.grammars.compiler.compile("json_schema", json.dumps(schema))  # a fresh matcher
bitmask = xgr.allocate_token_bitmask(1, vocab)  # int32 words, 32 tokens each


def allowed_tokens(grammar):
    grammar.matcher.fill_next_token_bitmask(bitmask)
    bits = (bitmask[0, :, None] >> torch.arange(32)) & 1  # bit b of word w is token 32 * w + b
    return bits.flatten()[:vocab].bool()


allowed_counts = []
for i, t in enumerate(j.token_ids):
    allowed = allowed_tokens(grammar)
    allowed_counts.append(int(allowed.sum()))
    assert allowed[t], "the engine produced a token the grammar forbids"
    print(f"{i:>2} {tok.decode([t])!r:<12} {allowed_counts[-1]:>6} allowed")
    grammar.accept(t)
print("complete:", grammar.is_terminated)
"""),
    md(r"""
Three regimes. Between the values the grammar leaves one to five tokens: braces, quotes, the
colon, and the key names, spelled in whatever pieces of the vocabulary fit (`a`, `n`, `sw`, `er`
for "answer": among the few pieces allowed, those the model liked best). Where a value opens,
more: after `answer`'s colon, 28 (the space alone, and 27 tokens that begin with the space and
the opening quote, some carrying the string's first characters or even its end, written as the cell
above writes tokens: `' "'`, `' "('`, `' ""'`, `' "",'`).
Inside the string nearly the whole vocabulary of 49 152 tokens is allowed, until the 80
characters of `maxLength` run out: the count falls as long tokens stop fitting, and at the end
only the tokens that close the string are left. For `confidence` only the digits 1 to 5 remain,
and at the end only `}`, then only EOS.

The raw logprobs of the same answer show where the grammar overruled the model:
"""),
    code(r"""
fig, (a1, a2) = plt.subplots(2, 1, figsize=(12, 4.2), sharex=True)
steps = range(len(j.token_ids))
a1.bar(steps, allowed_counts, color="tab:green")
a1.set_yscale("log")
a1.set_ylabel("allowed tokens")
a2.bar(steps, [e["logprob"] for e in j.logprobs], color="tab:red")
a2.set_ylabel("raw logprob")
a2.set_xticks(list(steps), [repr(e["token"])[1:-1] for e in j.logprobs], rotation=75, fontsize=7)
a1.set_title("each step of the JSON answer: what the grammar allowed, and how likely the model found the token", fontsize=9)
fig.tight_layout()
plt.show()
print("steps with one allowed token:", sum(c == 1 for c in allowed_counts), "of", len(allowed_counts))
"""),
    md(r"""
The deepest red bars are the opening brace (the model wanted to begin with `KV`, as in section 1)
and the pieces of the key names: the mask left the model no other choice. That is why the engine reports the model's raw logprobs and not those
after the mask (where a forced token would always show 0, that is, probability 1).

## 4 · Penalties, and the order of the chain

A small model decoding greedily falls into loops. A text prompt (no chat template) that already
repeats itself, first as it is, then with each penalty:

* `repetition_penalty` p (SGLang's and vLLM's; from the CTRL paper): every token seen *in the
  prompt or the output* has its logit divided by p if positive, multiplied by p if negative.
* `frequency_penalty` f and `presence_penalty` r (OpenAI's): a token that occurs c > 0 times *in
  the output* loses c·f + r.
"""),
    code(r"""
from collections import Counter

text = "The KV cache stores keys and values. The KV cache stores keys and values. The KV cache"
cases = {
    "no penalty": {},
    "repetition_penalty=1.2": {"repetition_penalty": 1.2},
    "frequency_penalty=0.5": {"frequency_penalty": 0.5},
    "presence_penalty=0.5": {"presence_penalty": 0.5},
}
runs = {}
for name, kw in cases.items():
    runs[name] = p = srv.generate(text, SamplingParams(max_tokens=40, logprobs=True, top_logprobs=5, **kw))
    counts = Counter(p.token_ids)
    print(f"{name:<23} {len(counts):>2} distinct of {len(p.token_ids)} tokens, the most repeated {max(counts.values())}x")
    print(f"    {p.text!r}")
"""),
    md(r"""
Without a penalty the model writes "is a data structure that is designed to be used as a data
structure" and starts the sentence over. The frequency and presence penalties at 0.5 change the
sixth token, then fall into another loop ("can be modified by the user"), with even fewer
distinct tokens: they count only the output. A token already in the output loses 0.5 under
either one; the frequency penalty takes 0.5 more for each further occurrence (1.0 at two), the
presence penalty never more than its 0.5. So the two part ways from a token's second occurrence;
here that difference never changed which token was the most likely, and the two answers are the
same. The repetition penalty counts the
prompt too, so it also pushes the model away from the prompt's own words: hardly a token repeats,
but the answer drifts off topic. A penalty is a blunt tool.

What happened at the sixth token? The logprobs of both runs at that position:
"""),
    code(r"""
plain, penalised = runs["no penalty"], runs["repetition_penalty=1.2"]
k = next(i for i, (x, y) in enumerate(zip(plain.token_ids, penalised.token_ids)) if x != y)
top_plain = [t["token"] for t in plain.logprobs[k]["top_logprobs"]]
top_pen = [t["token"] for t in penalised.logprobs[k]["top_logprobs"]]
print("first different token at position", k, ":", repr(plain.logprobs[k]["token"]), "vs",
      repr(penalised.logprobs[k]["token"]))
print("raw top-5, no penalty:", top_plain)
print("raw top-5, penalised: ", top_pen)
print("the penalised run took the raw rank", top_pen.index(penalised.logprobs[k]["token"]) + 1)
"""),
    md(r"""
Both runs saw the same raw distribution (the context so far was the same), where ` is` came
first. ` is` had appeared in the output already ("is a data structure that"), so the penalty
lowered it, and the sampler took ` can`, the raw second.

### The links, by hand

`process_logits(logits, reqs)` is the whole chain: one row of logits per request that samples now.
On a vocabulary of four tokens, with token 0 in the prompt and token 1 twice in the output:
"""),
    code(r"""
from minisgl_edu.core import Req
from minisgl_edu.engine.logits_chain import process_logits

row = torch.tensor([[2.0, -1.0, 0.5, 3.0]])
for kw in ({"repetition_penalty": 2.0}, {"frequency_penalty": 0.5, "presence_penalty": 0.25}, {"logit_bias": {3: -100}}):
    req = Req(uid=0, input_ids=[0], sampling_params=SamplingParams(**kw), output_ids=[1, 1])
    print(f"{str(kw):<52}", row[0].tolist(), "->", process_logits(row, [req])[0].tolist())
"""),
    md(r"""
### The order

```
the model's logits ──┬──▶ logprobs (take_logprobs): the model's own distribution
                     ▼
   1. repetition penalty      tokens of the prompt and the output
   2. frequency, presence     tokens of the output
   3. logit bias              the request's token ids
   4. grammar mask            -inf for every token the grammar forbids, greedy rows too
                     ▼
   temperature, top-k, top-p, then a draw (or the argmax for greedy)
```

Why this order (`process_logits` in `engine/logits_chain.py`, called by `Sampler.sample`):

* **Logprobs first, from the raw logits.** They answer "what did the model think?", which is what a
  client uses them for (confidence, ranking answers, debugging a prompt). Taken after the chain
  and the sampler's filters, they would describe the request's own knobs instead: a token forced
  by a grammar would show probability 1, a banned token -inf, and at temperature 0 every token
  would have probability 1. vLLM returns raw logprobs by default too;
  SGLang's default takes them after its temperature scaling (its `SGLANG_RETURN_ORIGINAL_LOGPROB`
  gives them before).
* **Penalties before the bias.** The repetition penalty *scales* a logit; applied after the bias,
  it would scale the bias too, and a bias of +2 would not mean +2. (Engines differ here: vLLM adds
  the bias first, in `vllm/v1/sample/sampler.py`. There is no standard order, which is why this
  one is written down once.)
* **The mask before temperature, top-k and top-p.** Top-k over the unmasked logits could keep
  only forbidden tokens, and the mask would then leave nothing to draw; top-p would measure its
  nucleus on probabilities that forbidden tokens share. (Among links 1-4 the mask's place is a
  choice: a forbidden logit is -inf, and stays -inf through any penalty or bias.)
* **Greedy rows too.** Greedy decoding is an argmax, and an engine is tempted to take a short path
  for it (this one, on CUDA, takes the argmax inside the decode graph). The argmax of the unmasked
  logits is often a token the grammar forbids. So any request that uses the chain goes through
  the sampler, greedy or not (`needs_chain` in `engine/logits_chain.py`, asked by the engine's
`needs_sampler`).

What happens without the mask? The engine has an injection point, `engine.sampler.process_fn`
(exercise 7 plugs your chain in there). With a chain that changes nothing, a greedy JSON request
takes the model's own first token, which the grammar refuses, and the scheduler ends the request
(`StructuredOutput.finish_reason` never lets a request continue off its grammar):
"""),
    code(r"""
sampler = srv.engine.sampler
sampler.process_fn = lambda logits, reqs: logits  # no penalties, no bias, no mask
try:
    broken = srv.generate(question, SamplingParams(max_tokens=20, json_schema=json.dumps(schema)))
finally:
    sampler.process_fn = process_logits
print(broken.finish_reason, broken.token_ids, repr(tok.decode(broken.token_ids)))
fixed = srv.generate(question, SamplingParams(max_tokens=60, json_schema=json.dumps(schema)))
print(fixed.finish_reason, fixed.token_ids[:3], "... the same as before:", fixed.text == j.text)
"""),
    md(r"""
## 5 · The same features in the OpenAI API, in SGLang and in mini-sglang

| feature | OpenAI chat request | here (`SamplingParams`) | SGLang |
|---|---|---|---|
| logprobs | `logprobs: true`, `top_logprobs: k` (0-20) | `logprobs`, `top_logprobs`; `engine/logprobs.py` | `return_logprob`, `top_logprobs_num` (in `GenerateReqInput`, beside the sampling params) |
| several answers | `n` | `n`: n requests, the prompt's pages shared (`scheduler/prompt_sharing.py`) | `n` in the sampling params, `parallel_sample_num` in the tokenizer manager |
| frequency / presence penalty | `frequency_penalty`, `presence_penalty` (-2 to 2) | the same names; `apply_penalties` | the same names; penalizers in `sglang/srt/sampling/penaltylib` |
| repetition penalty | (not in OpenAI's API; an extension) | `repetition_penalty` | `repetition_penalty`; a penalizer in `penaltylib` |
| logit bias | `logit_bias: {"token id": -100..100}` | `logit_bias`; `apply_logit_bias` | `logit_bias` |
| structured output | `response_format: {"type": "json_schema", "json_schema": {"schema": ...}}` | `json_schema`, `regex`, `ebnf`; XGrammar (`engine/grammar.py`) | `json_schema`, `regex`, `ebnf`; `--grammar-backend xgrammar` (or outlines, llguidance) |
| all of a batch's choices | | the logits chain, rows per link (`logits_chain.py`) | `SamplingBatchInfo` (`sglang/srt/sampling/sampling_batch_info.py`) |

The server (`python -m minisgl_edu.serve`) takes these OpenAI fields and SGLang's `regex` and
`ebnf` extensions (`server/protocol.py`), and refuses with a 400 a field it does not honour.

**mini-sglang** (the reference commit) has none of these. Its `OpenAICompletionRequest`
(`python/minisgl/server/api_server.py`) declares `n`, `presence_penalty` and `frequency_penalty`,
but `v1_completions` builds its `SamplingParams` from `ignore_eos`, `max_tokens`, `temperature`,
`top_k` and `top_p` only (with a "TODO: support more sampling parameters"), so those three are
accepted and dropped. Its source has no logprobs, no logit bias, no repetition penalty and no
grammar or JSON schema anywhere.

## Summary

* Logprobs are the model's raw distribution, taken before anything else touches the logits: they
  show where the model hesitated, and where a bias, a penalty or a grammar overruled it.
* `n` answers are `n` requests; the first one's prompt goes into the prefix cache right after its
  prefill, and the others compute only the half-filled last page.
* A grammar is a mask per step: it guarantees the form (the output parses and validates), not
  the content.
* The chain's order is fixed in one place: penalties, bias, mask, then temperature, top-k, top-p
  and the draw; a request that uses the chain is never sent down the greedy shortcut.

## Exercises

1. `exercises/07_logits_chain.ipynb`: write `process_logits` yourself (penalties, bias, the mask,
   vectorised over the rows that use each link); the grader plugs it into the real engine through
   `engine.sampler.process_fn` and compares tokens, finish reasons and logprobs. Stretch: add
   `min_p`, which the engine does not have.
2. Ask for the JSON answer with `temperature=1.0` and a `seed`: does it still validate? Count how
   many steps had exactly one allowed token: does sampling change that number?
3. Write a `regex` for a date (`\d{4}-\d{2}-\d{2}`) and ask "When was the transformer paper
   published?". Draw the allowed-token counts: how do they compare with the JSON's?
4. Send `n=4` with a prompt of exactly 32 tokens (a multiple of the page size). How many prompt
   tokens does each of the three followers compute now? (Hint: at least one token of a prompt must
   be computed to get its logits.)
5. The frequency penalty at 0.5 still looped. Find the smallest `frequency_penalty` that breaks
   the loop of section 4, and compare the answer with `repetition_penalty=1.2`'s.
"""),
]
