from cells import code, md

CELLS = [
    md(r"""
# 05 · Inside the engine: the forward pass and the generation loop

**Goal:** write the model's forward pass and a generation loop yourself, in plain PyTorch, and
check them against the package: the same next-token logits, the same greedy tokens, and the same
sampled tokens for temperature, top-k and top-p with a seed.
**Expected time:** 45 minutes. How long the cells take depends on how busy the machine is (its
load average, from `uptime`): on the 2-core course machine they ran in 66 s under
`pytest --nbval` at a load average of about 6, and building the chapter (every cell run once) took
972 s at 14 to 29.

Where we are on the path: the scheduler has chosen a batch and calls `launch`, which calls
`Engine.launch_batch` (`engine/engine.py`; `forward_batch` is the same and waits for the tokens). That runs the model on the batch's tokens
(`models/decoder.py`, `models/layers.py`) and samples one token per request (`engine/sampler.py`).
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from safetensors.torch import load_file

from minisgl_edu.models import ModelConfig, load_tokenizer, resolve_model

torch.manual_seed(0)
model_dir = resolve_model("smollm2-135m")
cfg = ModelConfig.from_dir(model_dir)
tok = load_tokenizer(model_dir)
W = load_file(f"{model_dir}/model.safetensors")  # name -> tensor, Hugging Face names
print(cfg.arch, "layers", cfg.num_layers, "hidden", cfg.hidden_size, "heads", cfg.num_heads,
      "kv heads", cfg.num_kv_heads, "head dim", cfg.head_dim)
print([k for k in W if k.startswith("model.layers.0.")])
"""),
    md(r"""
## The pieces of a Llama layer

* **RMSNorm**: scale each vector to unit root-mean-square, times a learned weight.
* **Attention** with **RoPE**: queries and keys are rotated by an angle that grows with the
  position, so their dot product depends on how far apart two tokens are. SmolLM2 has 9 query
  heads but only 3 key/value heads (**grouped-query attention**): each K/V head serves 3 query
  heads, which makes the KV cache 3× smaller.
* **MLP** (SwiGLU): `down(silu(gate(x)) * up(x))`.
* A residual connection around each of attention and MLP.

The KV cache is the reason the engine is fast: the keys and values of earlier tokens never
change, so they are computed once, stored, and each new token only computes its own.
"""),
    code(r'''
def rms_norm(x, weight, eps=cfg.rms_norm_eps):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim))


def rope(x, positions):
    """x: [heads, T, head_dim]. Rotate pairs (i, i + head_dim/2) by position * inv_freq[i]."""
    angles = positions[:, None].float() * inv_freq[None, :]          # [T, head_dim/2]
    cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)  # [T, head_dim]
    x1, x2 = x[..., : cfg.head_dim // 2], x[..., cfg.head_dim // 2 :]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def attention(i, x, positions, cache):
    p = f"model.layers.{i}.self_attn."
    T = x.shape[0]
    q = (x @ W[p + "q_proj.weight"].T).view(T, cfg.num_heads, cfg.head_dim).transpose(0, 1)
    k = (x @ W[p + "k_proj.weight"].T).view(T, cfg.num_kv_heads, cfg.head_dim).transpose(0, 1)
    v = (x @ W[p + "v_proj.weight"].T).view(T, cfg.num_kv_heads, cfg.head_dim).transpose(0, 1)
    q, k = rope(q, positions), rope(k, positions)
    if i in cache:  # keys and values of the earlier tokens, computed in earlier calls
        k = torch.cat([cache[i][0], k], dim=1)
        v = torch.cat([cache[i][1], v], dim=1)
    cache[i] = (k, v)
    group = cfg.num_heads // cfg.num_kv_heads  # query heads per K/V head
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    scores = q @ k.transpose(1, 2) / cfg.head_dim ** 0.5   # [heads, T, all tokens so far]
    # Causal mask: a token sees itself and the tokens before it, never the ones after.
    S = k.shape[1]
    mask = torch.arange(S)[None, :] > (S - T + torch.arange(T))[:, None]
    scores = scores.masked_fill(mask, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v                 # [heads, T, head_dim]
    return out.transpose(0, 1).reshape(T, -1) @ W[p + "o_proj.weight"].T


def mlp(i, x):
    p = f"model.layers.{i}.mlp."
    gate, up = x @ W[p + "gate_proj.weight"].T, x @ W[p + "up_proj.weight"].T
    return (torch.nn.functional.silu(gate) * up) @ W[p + "down_proj.weight"].T


@torch.inference_mode()
def forward(ids, start, cache):
    """Logits for the tokens `ids`, which sit at positions start, start+1, ... of the sequence."""
    positions = torch.arange(start, start + len(ids))
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    for i in range(cfg.num_layers):
        x = x + attention(i, rms_norm(x, W[f"model.layers.{i}.input_layernorm.weight"]), positions, cache)
        x = x + mlp(i, rms_norm(x, W[f"model.layers.{i}.post_attention_layernorm.weight"]))
    x = rms_norm(x, W["model.norm.weight"])
    return x @ W["model.embed_tokens.weight"].T  # tied embeddings: the output matrix is the input one
'''),
    md(r"""
## Check the logits

We compare with `transformers`' own Llama on the same weights: the largest difference should be
tiny (float32 rounding) and the top token the same.
"""),
    code(r"""
from minisgl_edu.tokenizer import encode_prompt
from transformers import AutoModelForCausalLM
from transformers.utils import logging as hf_logging

hf_logging.disable_progress_bar()  # no "Loading weights" bar in the stored output
prompt_ids = encode_prompt(tok, [{"role": "user", "content": "What is KV Cache?"}])
mine = forward(prompt_ids, 0, cache={})
hf = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
with torch.inference_mode():
    ref = hf(torch.tensor([prompt_ids])).logits[0]
print("prompt tokens:", len(prompt_ids))
print("max |difference| < 1e-3:", (mine - ref).abs().max().item() < 1e-3)
print("same next token:", mine[-1].argmax().item(), ref[-1].argmax().item())
del hf
"""),
    md(r"""
## The generation loop: prefill, then decode

The first call (**prefill**) runs the whole prompt and fills the cache; the logits of its last
position give the first new token. Every later call (**decode**) runs only the newest token at its
position, attending to everything in the cache. Greedy decoding takes the argmax each time.
"""),
    code(r"""
def generate(prompt_ids, max_tokens, pick):
    cache = {}
    logits = forward(prompt_ids, 0, cache)[-1]           # prefill
    out = []
    for _ in range(max_tokens):
        token = pick(logits)
        out.append(token)
        if token in cfg.eos_token_ids:
            break
        logits = forward([token], len(prompt_ids) + len(out) - 1, cache)[-1]   # decode
    return out


greedy = generate(prompt_ids, 16, lambda logits: int(logits.argmax()))
print(greedy)
print(repr(tok.decode(greedy)))
"""),
    md(r"""
The package must give the same tokens: the engine computes the same model with a paged KV cache
and batching, but greedy decoding leaves no room for a different answer.
"""),
    code(r"""
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu")
res = srv.generate(prompt_ids, SamplingParams(max_tokens=16))
print(res.token_ids)
print("same as my loop:", res.token_ids == greedy)
"""),
    md(r"""
## Sampling: temperature, top-k, top-p

Greedy always gives the same answer. To sample, turn logits into probabilities:

* **temperature** `T`: `softmax(logits / T)`. `T < 1` sharpens the distribution (closer to
  greedy), `T > 1` flattens it.
* **top-k**: keep only the `k` most likely tokens.
* **top-p** (nucleus): keep the smallest set of most likely tokens whose probabilities add up to
  `p`; drop the long tail of unlikely tokens.

Then renormalise and draw one token. A request's `seed` gives it its own random generator, so its
tokens do not depend on the other requests in its batch. (The seed is this engine's addition:
mini-sglang's `SamplingParams` has none, and it samples on the GPU only, with FlashInfer's
kernels, in `engine/sample.py`. This engine samples with torch on the CPU, and on CUDA with
FlashInfer when it is installed.)
"""),
    code(r"""
def filter_probs(logits, temperature, top_k=-1, top_p=1.0):
    logits = logits.float() / temperature
    if top_k > 0:
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p   # mass of the tokens ranked above
        sorted_p[before >= top_p] = 0.0                      # already reached p without this one
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
        probs = probs / probs.sum()
    return probs


last = mine[-1]
for T, k, p in [(1.0, -1, 1.0), (0.5, -1, 1.0), (1.0, 20, 1.0), (1.0, -1, 0.9), (0.7, 40, 0.95)]:
    probs = filter_probs(last, T, k, p)
    top = torch.topk(probs, 3)
    print(f"T={T} top_k={k:>3} top_p={p}: tokens kept {int((probs > 0).sum()):>5}, "
          f"top 3 {[tok.decode([int(i)]) for i in top.indices]}")
"""),
    md(r"""
Compare with the package's `filter_logits` (`engine/sampler.py`), then sample with a seed with
our loop and with the engine.
"""),
    code(r"""
from minisgl_edu.engine.sampler import filter_logits

print("same probabilities as engine/sampler.py:",
      all(torch.allclose(filter_probs(last, *a), filter_logits(last, *a), atol=1e-6)
          for a in [(1.0, -1, 1.0), (0.5, 20, 1.0), (0.7, 40, 0.95)]))

sp = SamplingParams(max_tokens=16, temperature=0.8, top_k=50, top_p=0.95, seed=1234)
gen = torch.Generator().manual_seed(sp.seed)
mine_sampled = generate(prompt_ids, 16, lambda logits: int(torch.multinomial(
    filter_probs(logits, sp.temperature, sp.top_k, sp.top_p), 1, generator=gen)))
engine_sampled = srv.generate(prompt_ids, sp).token_ids
print(mine_sampled)
print("same as the engine with the same seed:", mine_sampled == engine_sampled)
print(repr(tok.decode(mine_sampled)))
"""),
    md(r"""
## The engine's forward pass: inputs, run, output

`Engine.forward_batch` (`engine/engine.py`) runs the same computation for **many requests at
once**. It is one line, around `launch_batch`, which the scheduler's `launch` calls:
"""),
    code(r"""
import inspect

from minisgl_edu.engine import Engine

print(inspect.getsource(Engine.forward_batch))
"""),
    md(r"""
`launch_batch` is the first function you meet in `engine/engine.py` after `forward_batch`. It
starts the batch and returns a `PendingForward` (`engine/output.py`): a handle on the batch's new
tokens, whose `result()` waits for them and returns a `ForwardOutput`, one list of new tokens per
item of the batch (an empty list for a prompt chunk that leaves part of its prompt for a later
step).

* On CPU, `launch_batch` calls `_forward_now` and returns once everything is computed, so
  `result()` has nothing to wait for. (A decode batch of a few requests runs on one torch thread:
  its operations are small, and on a busy machine waking a second thread for each one costs more
  than it saves.)
* On CUDA it only queues `_forward_now`'s work on the engine's own CUDA stream and returns while
  the GPU is still computing. The overlap loop (chapter 09) uses that time to prepare the next
  batch, and calls `result()` afterwards.

That overlap loop is also why a decode token is read on the device (step 1 below). The forward
pass itself is `_forward_now`, in three steps; CUDA graphs (chapter 09) and the verify batches of
speculative decoding (chapter 12) plug in behind them:
"""),
    code(r"""
print(inspect.getsource(Engine._forward_now))
"""),
    md(r"""
**1. Inputs** (`engine/forward_inputs.py`). A batch is a list of requests, each contributing a run
of tokens: a prompt chunk (the whole prompt, or part of a long one) or its one newest token. The
model wants one flat sequence, so `ForwardInputs.of` lays the items end to end: each token's id,
its position in its own request, the slot of the KV pool its K/V is written to (`out_loc`), and
which positions need logits (`sample_at`: the last position of each request that gets a token).
Per item it also keeps the request's page-table row (`rows`) and two lengths, `q_lens` and
`kv_lens`, explained below.

Where the token ids come from: a prompt's tokens from the host, the request's list of tokens. A
decode item's input token is the one its request sampled last, and that one is read on the
device: the sampler keeps each page-table row's newest token in `engine.last_tokens`, and
`ForwardInputs` puts a 0 in `ids` at that place and lists the place in `from_device`, for the
runner to fill in from `last_tokens`. In `normal_loop` the host knows that token too, but the
overlap loop (chapter 09) builds the next batch while the batch that samples it is still running,
when only the device has it; one rule serves both loops.

Two requests, as the scheduler plans their first batch (`srv.plan()` picks it without running it;
`scheduler.last_batch` is that batch):
"""),
    code(r"""
from minisgl_edu.engine.forward_inputs import ForwardInputs

uids = [srv.submit(prompt_ids[:6], SamplingParams(max_tokens=3)), srv.submit(prompt_ids[:4], SamplingParams(max_tokens=3))]
engine = srv.engine


def show_inputs():
    srv.plan()
    batch = srv.scheduler.last_batch
    inputs = ForwardInputs.of(batch, engine.page_table, engine.page_size)
    print(batch.phase, "batch")
    for name in ("ids", "from_device", "positions", "out_loc", "sample_at", "rows", "q_lens", "kv_lens"):
        print(f"  {name:<10}", getattr(inputs, name))
    return batch, inputs


batch, inputs = show_inputs()
"""),
    md(r"""
The prefill batch is 10 tokens, request A's 6 then request B's 4, and needs logits at two of them
(places 5 and 9 of the flat sequence: the last token of each prompt).

**The `out_loc` values.** The KV pool is cut into pages of `page_size` tokens (16 here), and the
slot of a token is `page × page_size + offset`: position `p` of a request is in the
`p // page_size`-th page of its page-table row, at offset `p % page_size`. Before the batch, the
scheduler gave request A (uid 2) the page-table row 0 with one page, and request B (uid 3) the
row 1 with another. Which pages? The next ones on the allocator's free list
(`kvcache/allocator.py`), which hands out page 0 first. Pages 0 to 3 are not free: the prefix
cache keeps the tokens of the two requests that the cells above generated, so that a later
request starting with the same tokens can reuse them. A and B do start with those tokens, but
only whole pages are shared (chapter 06), and 6 or 4 tokens do not fill one. So A got page 4
(slots 64 to 79) and B page 5 (slots 80 to 95):
"""),
    code(r"""
ps = engine.page_size
for it, row in zip(batch.items, inputs.rows):
    pages = engine.page_table.pages[row]
    slots = [pages[pos // ps] * ps + pos % ps for pos in range(it.start, it.end)]
    print(f"uid {it.req.uid}: row {row}, pages {pages}, positions {it.start}..{it.end - 1} -> slots {slots}")
print("pages held by the prefix cache:", [p for p, c in enumerate(srv.snapshot().pages.cached) if c])
"""),
    md(r"""
**Where your `cache[i] = (k, v)` went.** Your `attention` kept one tensor of keys and one of
values per layer, for one request, and made them longer with `torch.cat` at each call. The
engine keeps one key buffer and one value buffer per layer for all requests together,
`engine.pool.k[i]` and `engine.pool.v[i]`, with one row (a slot) per token. In every layer,
attention first writes the new tokens' keys and values at their `out_loc` slots
(`KVPool.store`, an `index_copy_`), then reads what it needs. Run the prefill batch and compare
what layer 0 wrote for request A with the keys your `forward` keeps for the same six tokens:
"""),
    code(r"""
srv.step()  # runs the prefill batch: each request gets its first token
my_cache = {}
forward(prompt_ids[:6], 0, my_cache)  # your forward pass over A's six tokens
my_keys = my_cache[0][0].transpose(0, 1)  # layer 0: [KV heads, tokens, head dim] -> [tokens, KV heads, head dim]
pool_keys = engine.pool.k[0][inputs.out_loc[:6]]  # what layer 0 wrote at A's out_loc
print("engine.pool.k:", tuple(engine.pool.k.shape), "= [layers, slots, KV heads, head dim]")
print("layer 0, request A: the keys at its out_loc are your cache[0] keys:",
      torch.allclose(pool_keys, my_keys, atol=1e-3))
"""),
    md(r"""
The batch after it is a decode batch:
"""),
    code(r"""
batch, inputs = show_inputs()
"""),
    md(r"""
One token per request, each at the position after its prompt, and every one of them is sampled.
Their ids are 0 here and both places are in `from_device`: the runner reads each from
`engine.last_tokens`, which the prefill's sampler just wrote:
"""),
    code(r"""
print("engine.last_tokens at rows", inputs.rows, ":", engine.last_tokens[inputs.rows].tolist())
print("the requests' newest tokens:", [it.req.output_ids[-1] for it in batch.items])
"""),
    md(r"""
**`q_lens` and `kv_lens`.** `q_lens` counts the tokens of a request that this pass computes (its
queries): 6 and 4 in the prefill, 1 each now. `kv_lens` counts the tokens the request has in the
cache once this pass has written its new ones: the tokens its queries attend to. In the prefill
the two were equal, since nothing was cached before. Now A computes 1 token and attends to 7 (its
6 prompt tokens and the new one, whose K/V this pass writes at slot 70, page 4's offset 6). They
also differ for the second chunk of a long prompt and for a prompt whose first pages the prefix
cache already holds.

**2. Run** (`engine/runner.py`). The engine chose its runner once, when it was built: on CPU the
plain `EagerRunner`. It tells the attention backend the batch's shape (`AttentionMetadata`: the
`q_lens`, `kv_lens` and page-table rows of the requests, and `out_loc`), runs the model on the
flat ids and positions, and computes logits only at `sample_at`: the output matrix (49,152 × 576)
is the largest of this model, and a prompt's other positions never need it. On a GPU the engine
chose `CudaGraphRunner` instead, which replays a captured graph where one fits the batch (chapter
09) and hands every other batch to the eager one. Run the decode batch through the runner by hand:
"""),
    code(r"""
out = engine.runner.run(inputs)  # every layer writes the new K/V at out_loc, then attends
print(type(engine.runner).__name__, "logits", tuple(out.logits.shape))
"""),
    md(r"""
**The read.** To attend, request A needs the keys and values of all `kv_lens[0]` = 7 of its
tokens. The torch backend (`TorchBackend`, `attention/torch_backend.py`) finds them through A's
page-table row: it takes the first pages of the row (enough for 7 tokens: one), gathers them
whole from the pool (`KVPool.load_pages`), and masks every position from `kv_len` on, so the
rest of the page is never attended to. Do the same for layer 0, and compare with your cache
after your own decode step with the same token:
"""),
    code(r"""
row, kv_len = inputs.rows[0], inputs.kv_lens[0]
pages = engine.page_table.table[row, : -(-kv_len // ps)].long()  # the row's first pages, enough for kv_len tokens
read_keys, _ = engine.pool.load_pages(0, pages[None])  # [1 request, pages × page_size, KV heads, head dim]
forward(batch.items[0].input_ids, kv_len - 1, my_cache)  # your decode step: A's newest token, at position 6
print(f"row {row}: pages {pages.tolist()}, {read_keys.shape[1]} slots gathered, the first {kv_len} attended")
print("layer 0, request A: the keys attention reads are your cache[0] keys:",
      torch.allclose(read_keys[0, :kv_len], my_cache[0][0].transpose(0, 1), atol=1e-3))
"""),
    md(r"""
**3. Output** (`engine/sampler.py`). One token per row of logits. Sample from the logits of the
run above by hand, then send the same batch through `launch_batch` to see its `PendingForward`,
then let the server run the batch for real, and compare:
"""),
    code(r"""
mine = engine.sampler.sample(out.logits, batch.reqs).tolist()
pending = engine.launch_batch(batch)
print(type(pending).__name__, "| sampled per item:", pending.sampled, "| result():", pending.result())
srv.run_until_idle()
print("sampled by hand:", mine, "| the engine's second tokens:", [srv.result(u).token_ids[1] for u in uids])
"""),
    md(r"""
**Drafts.** With speculative decoding (chapter 12), a request may bring guesses of its next
tokens, its drafts, into a decode batch: one item of `1 + k` tokens, its newest token and `k`
drafts. Then every one of its positions is in `sample_at`, not only its last: the logits at each
position are the model's choice of the token after it, which is what each draft is checked
against. For such a batch step 3 does not sample: `verify_batch` (`engine/verify.py`) returns the
model's token at every position, and the scheduler keeps the drafts the model agrees with.

A batch need not be of one kind: the flat layout takes prompt chunks and decode tokens side by
side, and with `--enable-mixed-chunk` (SGLang's flag, copied here; off by default, and mini-sglang
has no such option) the scheduler builds exactly such batches; attention takes each item's own
`q_lens` and `kv_lens`.

## Summary

* Forward pass: embed → 30 × (RMSNorm, attention with RoPE and GQA, RMSNorm, SwiGLU MLP) →
  norm → logits. Prefill runs the prompt; decode runs one token against the cache.
* Greedy = argmax. Temperature, top-k and top-p reshape the distribution before the draw; a seed
  makes the draw reproducible.
* `Engine.forward_batch` = `launch_batch(batch).result()`: `launch_batch` returns a
  `PendingForward` (done at once on CPU, still running on CUDA), `result()` its tokens.
* `Engine._forward_now`: inputs (the batch laid out flat, `ForwardInputs`), run (the runner chosen
  when the engine was built: eager, or CUDA graphs), output (sample, or verify drafts).
* The KV cache is a pool of pages shared by all requests: each token's K/V is written at its slot
  (`out_loc`), and attention reads a request's `kv_len` tokens through its page-table row.

## Exercises

1. Remove the causal mask in `attention` and compare the logits again. Which positions change,
   and which do not? Why?
2. Run the generation loop without the cache (recompute the whole sequence each step) and check
   the tokens are the same. How many token-layer computations does each version do for 16 tokens?
3. Sample with `temperature=0.01`. Why is it (almost) greedy? Why does the engine treat
   `temperature=0` as greedy instead of dividing by zero?
4. Submit a prompt of 20 tokens and plan its batch: how many pages does it get, and which
   `out_loc` values? Once it has finished, submit the same 20 tokens again: how many of them does
   the prefix cache serve, and what are the second request's `q_lens` and `kv_lens`?
5. `exercises/01_finish.ipynb`: the loop above stops on EOS. Write the engine's full finish check.
"""),
]
