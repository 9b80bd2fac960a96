from cells import code, md

CELLS = [
    md(r"""
# 09 · Performance: batching, overlap scheduling, CUDA graphs, FlashInfer, the bytes of the KV cache

**Goal:** measure on your CPU where the time of a serving step goes, and understand what each of
the three big GPU optimisations of SGLang-style engines removes: overlap scheduling, CUDA graphs
and FlashInfer attention; then what a decode step must read at least (the KV cache, token by
token), and what an FP8 KV cache halves and costs.
**Expected time:** 30 minutes (the cells run in about a minute).

The measured numbers below depend on your machine (and on whatever else it runs), so the
automatic notebook check ignores them; the shapes of the results are what matter.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import time

import torch
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu", max_running_requests=32)
question = [{"role": "user", "content": "Write a short poem about the sea."}]
"""),
    md(r"""
## 1. Batching: decode is cheap to share

A decode step reads every weight of the model once to compute one token per request. With 16
requests in the batch the weights are still read once: the step costs little more than with one
request, so the tokens per second grow almost with the batch size, until the arithmetic (or, for
long contexts, reading the KV cache) becomes the limit.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
def decode_rate(batch_size, new_tokens=8):
    srv.reset()
    for _ in range(batch_size):
        srv.submit(question, SamplingParams(max_tokens=new_tokens, ignore_eos=True))
    decode_seconds, decode_tokens = 0.0, 0
    while not srv.is_idle():
        t0 = time.perf_counter()
        snap = srv.step()
        if snap.batch is not None and snap.batch.phase == "decode":
            decode_seconds += time.perf_counter() - t0
            decode_tokens += snap.batch.num_tokens
    return decode_tokens, decode_seconds


rates = {}
for bs in [1, 4, 16]:
    tokens, seconds = decode_rate(bs)
    rates[bs] = tokens / seconds
    print(f"batch {bs:>2}: {tokens:>3} decode tokens, {1000 * seconds / (tokens / bs):6.1f} ms per step, "
          f"{rates[bs]:6.1f} tokens/s")
"""),
    md(r"""
Every request got its 7 decode steps in each case; what changed is how many of them ran
together, sharing one read of the weights:
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
print({bs: f"{rate / rates[1]:.1f}x the tokens/s of batch 1" for bs, rate in rates.items()})
"""),
    md(r"""
## 2. Where the time of one step goes

A step is: Python scheduling (`Scheduler.schedule`: receive, choose a batch, reserve pages), the
forward pass (`Engine.forward_batch`), then Python again (`_process_results`, detokenizing). We
time the two halves with `plan()` (scheduling only) and `step()` (the rest).
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
srv.reset()
for _ in range(8):
    srv.submit(question, SamplingParams(max_tokens=10, ignore_eos=True))
sched, rest = 0.0, 0.0
while not srv.is_idle():
    t0 = time.perf_counter(); srv.plan(); t1 = time.perf_counter(); srv.step(); t2 = time.perf_counter()
    sched, rest = sched + t1 - t0, rest + t2 - t1
print(f"scheduling: {1000 * sched:.1f} ms, forward + results: {1000 * rest:.1f} ms "
      f"({100 * sched / (sched + rest):.1f}% of the time in scheduling)")
"""),
    md(r"""
On a CPU the forward pass is so slow that scheduling is a rounding error. On a GPU a decode step
of a small model takes a few milliseconds, and the same Python scheduling (a millisecond or two)
becomes a large share of the time: the GPU sits idle while Python decides what to run next.

**Overlap scheduling** (`overlap_loop` in `scheduler/overlap.py`; SGLang's `event_loop_overlap`)
removes that idle time (mini-sglang has the same `overlap_loop`): while the GPU runs batch N, the
CPU already schedules batch N+1 and
launches it, and only then waits for batch N's tokens and processes them. The price is a step of
delay in knowing a request finished (it may compute one token too many, which is dropped) and
freeing its pages only once no in-flight batch can still write them.

Overlap hides the host's work only while that work is shorter than the GPU's step, at every step.
One thing in a Python loop is not: the garbage collector. A step of a large batch makes
thousands of small objects, and every so often Python follows them with a full collection, which
walks every object the process holds; a process that has loaded torch and a model holds hundreds
of thousands. In the scheduler's loop at decode batch 256, sending its messages away each step as
the server does, that is a stop of ~0.2 s about every 1,000 steps on the course CPU
(`docs/benchmarks.md`, "The garbage collector"); a loop that keeps every step's messages until the end, as the offline
benchmark's harness does, meets them several times as often. On an H200 the GPU of that
256-request benchmark waited ~1.2 s of a 7 s run in a handful of long stops, and each of the
longest had a full collection inside it (`docs/benchmarks.md`, measured with CUDA events around
each graph replay and a hook on each collection). So the server's processes run their loops
inside `frozen_heap()` (`process.py`): after start-up, `gc.freeze()` moves every object
alive to a generation the collector never visits again, as vLLM does for its engine and SGLang
offers as `freeze_gc`. Frozen, the same loop's longest step drops from ~200 ms to under
10 ms. On the H200 the 256-request benchmark went from 21.2-21.4k to 23.9-24.1k output tokens/s
(two alternating runs of each, one call); the server, which keeps fewer objects, meets fewer
stops and gains less.

## 3. Many small kernels: what CUDA graphs remove

A decode step of a 30-layer model is about a thousand small operations (a matmul, a norm, a RoPE,
an add ...). On a GPU each is at least one kernel launch costing a few microseconds of CPU time,
whatever its size. With small batches the launches, not the arithmetic, set the pace. Count them
with the PyTorch profiler on one decode step.

What to count needs care. The profiler records every `aten::` call, including the ones an
operator makes inside itself (`aten::linear` calls `aten::matmul`, which calls `aten::mm` ...), so
adding up its table counts one matmul three times. We count only the *outermost* calls (no
`aten::` call above them), and leave out those that only change a tensor's shape or strides (a
`view`, a `transpose`, a `.to()` that has nothing to convert): they launch no kernel.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from collections import Counter

from torch.profiler import ProfilerActivity, profile

# Operators that only make a view (or return their input): no kernel on a GPU, unless they call one.
SHAPE_ONLY = {"aten::view", "aten::reshape", "aten::_unsafe_view", "aten::transpose", "aten::t",
              "aten::permute", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select",
              "aten::expand", "aten::expand_as", "aten::as_strided", "aten::alias", "aten::narrow",
              "aten::chunk", "aten::split", "aten::split_with_sizes", "aten::unbind", "aten::flatten",
              "aten::unflatten", "aten::view_as", "aten::detach", "aten::lift_fresh",
              "aten::resolve_conj", "aten::resolve_neg", "aten::to", "aten::empty", "aten::contiguous"}


def is_outermost(e):
    p = e.cpu_parent
    while p is not None:
        if p.name.startswith("aten::"):
            return False
        p = p.cpu_parent
    return True


def does_work(e):
    return e.name not in SHAPE_ONLY or any(does_work(c) for c in e.cpu_children if c.name.startswith("aten::"))


srv.reset()
srv.submit(question, SamplingParams(max_tokens=4, ignore_eos=True))
srv.step()  # prefill
with profile(activities=[ProfilerActivity.CPU]) as prof:
    srv.step()  # one decode step
aten = [e for e in prof.events() if e.name.startswith("aten::")]
outer = [e for e in aten if is_outermost(e)]
work = [e for e in outer if does_work(e)]
print(f"aten calls recorded, nested ones included: {len(aten)}")
print(f"outermost calls: {len(outer)}; of those, calls that compute something: {len(work)} "
      f"(~{len(work) // 30} per layer)")
print("the most frequent:", Counter(e.name for e in work).most_common(6))
print(f"at ~5 us of launch overhead each on a GPU: ~{len(work) * 5 / 1000:.1f} ms per step, before any arithmetic")
"""),
    md(r"""
(Dividing by the 30 layers is a rough figure: a few of the calls belong to the embedding, the final
norm and the sampling, outside the layers.) Many of those calls are the small element-wise steps of
RoPE and RMSNorm in the plain PyTorch model; the GPU path replaces several of them with fused
kernels, but a step stays hundreds of launches.

A **CUDA graph** records the whole sequence of kernels of one decode step once, for a fixed batch
size, and then replays it with a single launch. The engine captures graphs for a list of batch
sizes (`engine/cuda_graph.py`, `CudaGraphRunner`) and pads a decode batch up to the next captured
size. It only works because the shapes of a decode step depend on the batch size alone: the
varying parts (which pages, which positions) are written into fixed input buffers before the
replay. A prefill's shape varies with its prompt, but a short one fits the same mould: each prompt
token is a decode "row" of its request that attends to the tokens up to itself, so a prefill of n
tokens replays the graph of n rows ("token-row" graphs, which also verify the drafts of
speculative decoding). Long prefills, whose kernels outweigh their launches, run without graphs.

## 4. Attention over pages: what FlashInfer removes

The torch attention backend (`attention/torch_backend.py`) is the reference: for each layer it
*gathers* every request's keys and values from their pages into a padded contiguous tensor, then
calls `scaled_dot_product_attention`. That copy grows with the context length and the batch.
FlashInfer's kernels (`attention/flashinfer_backend.py`) read the pages in place, through the page
table, with no copy and no padding, and plan the work once per batch for all layers. Here is the
share of a decode step spent inside the torch backend's attention on this CPU, for a long context:
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
attn = srv.engine.attn
spent = {"attention": 0.0}
original = attn.forward


def timed_forward(*args, **kwargs):
    t0 = time.perf_counter()
    out = original(*args, **kwargs)
    spent["attention"] += time.perf_counter() - t0
    return out


attn.forward = timed_forward
try:
    srv.reset()
    long_question = [{"role": "user", "content": "Repeat after me: " + "the sea is wide and deep, " * 60}]
    for _ in range(4):
        srv.submit(long_question, SamplingParams(max_tokens=6, ignore_eos=True))
    srv.step()  # prefill of all four
    spent["attention"] = 0.0
    t0 = time.perf_counter()
    while not srv.is_idle():
        srv.step()
    total = time.perf_counter() - t0
finally:
    attn.forward = original
ctx = srv.snapshot().requests[0].prompt_tokens
print(f"context ~{ctx} tokens x 4 requests: attention {100 * spent['attention'] / total:.0f}% of the decode time")
"""),
    md(r"""
**Splitting one request's keys.** At batch 1 a decode step has one query per head, and a GPU kernel
that gave each head to one program would keep only a handful of the H200's 132 streaming
multiprocessors (SMs) busy. Both
FlashInfer and our small-batch kernel (`minisgl_edu/kernels/decode_attention.py`) cut the keys into
splits, attend to each split separately, and merge. The merge is exact, because each split keeps
three things: the largest score `m`, the sum of `exp(score - m)` (call it `l`), and the output
before dividing by that sum (`acc`). Rescaling every split to the overall largest score `M`
gives back the softmax over all keys. A check on one head, in float64:
"""),
    code(r"""
g = torch.Generator().manual_seed(0)
q, keys, values = (torch.randn(*shape, generator=g, dtype=torch.float64) for shape in [(64,), (1000, 64), (1000, 64)])
scores = keys @ q / 64**0.5
reference = torch.softmax(scores, dim=0) @ values  # attention over all 1 000 keys at once

parts = []
for idx in torch.arange(1000).chunk(8):  # 8 splits of 125 keys, as 8 GPU programs would take them
    s = scores[idx]
    m = s.max()
    p = torch.exp(s - m)
    parts.append((m, p.sum(), p @ values[idx]))  # (m, l, acc): all that a split writes out
M = max(m for m, _, _ in parts)
merged = sum(torch.exp(m - M) * acc for m, _, acc in parts) / sum(torch.exp(m - M) * l for m, l, _ in parts)
same = bool((merged - reference).abs().max() < 1e-12)
print("the merged splits give the one-pass softmax (to 1e-12):", same)
assert same
"""),
    md(r"""
## 5. Two CPU details: the weight layout and the grouped heads

Two small choices on the CPU path, neither of which changes a single number it computes.

**Weight layout.** A linear layer computes `x @ W.T`, where the checkpoint stores `W` as
[out, in]. On CPU in float32 the loader stores the same numbers the other way round in memory
(`store_weights_input_major` in `models/loader.py`): `W` keeps its shape, but it is now a
transposed *view* of an [in, out] buffer, so `W.T` is a plain row-major matrix for the matrix
multiply.
"""),
    code(r"""
w = srv.engine.model.model.layers[0].mlp.gate_up_proj.weight
print("shape", tuple(w.shape), "strides", w.stride(), "| W.T contiguous:", w.t().is_contiguous())
"""),
    md(r"""
Whether that is faster depends on the CPU, the number of rows and what else the machine runs. The
cell times both layouts for 1, 8 and 16 rows, alternating them seven times and printing the
median. Run it a few times: where the two figures swap from run to run, the difference is in the
noise. (`python -m minisgl_edu.bench.cpu_ops` times the layer matmuls of a whole step; on the
course machine `docs/benchmarks.md` reports a gain with [in, out] at 8-16 rows and a small loss
at 1.)
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
import statistics

import torch.nn.functional as F

as_checkpoint = w.contiguous()  # the same numbers, stored [out, in]
layouts = {"stored [out, in]": as_checkpoint, "stored [in, out]": w}
for rows in (1, 8, 16):
    x = torch.randn(rows, w.shape[1])
    times = {name: [] for name in layouts}
    for _ in range(7):
        for name, weight in layouts.items():
            t0 = time.perf_counter()
            for _ in range(20):
                F.linear(x, weight)
            times[name].append((time.perf_counter() - t0) / 20 * 1e6)
    print(f"{rows:>2} rows:", ", ".join(f"{n} {statistics.median(t):.0f} us" for n, t in times.items()))
print("same result:", torch.allclose(F.linear(x, as_checkpoint), F.linear(x, w), atol=1e-5))
"""),
    md(r"""
**Grouped heads.** SmolLM2 has 9 query heads and 3 KV heads: each KV head serves a group of 3
query heads (grouped-query attention). In a decode step every request has one query token, so the
torch backend hands SDPA the 3 query heads of a group as 3 *rows* against their one KV head
(`q.view(batch, kv_heads, 3, head_dim)` in `TorchBackend._attend`), instead of asking it to
broadcast each KV head to 3 query heads. Same arithmetic, but each cached key and value is read
once per KV head instead of once per query head.

## 6. The floor: what a decode step must read, and an FP8 KV cache

In a decode step every running request computes one new token, and in every layer that token
attends to *all* of the request's earlier tokens: the step reads the K and V of every cached
token of every request. The weights are read once per step and shared by the whole batch
(section 1); the KV cache is not shared, each request reads its own. So as the batch and the
contexts grow, the KV cache becomes most of what a step reads. One token of context costs, in
every step that reads it,

    bytes per token = 2 (K and V) x layers x KV heads x head_dim x bytes per number

which is what `KVPool.bytes_per_token` computes (`kvcache/pool.py`):
"""),
    code(r"""
from minisgl_edu.kvcache.pool import FP8, KVPool

mc = srv.engine.model_config
shapes = {"SmolLM2-135M": (mc.num_layers, mc.num_kv_heads, mc.head_dim), "Qwen3-0.6B": (28, 8, 128)}
for name, (layers, kv_heads, head_dim) in shapes.items():
    per = {str(dt).removeprefix("torch."): KVPool.bytes_per_token(layers, kv_heads, head_dim, dt)
           for dt in (torch.float32, torch.bfloat16, FP8)}
    print(f"{name:>12} ({layers} layers, {kv_heads} KV heads x {head_dim}):",
          ", ".join(f"{dt} {n:,} B" for dt, n in per.items()))
"""),
    md(r"""
(The FP8 figure includes a float32 scale per token and head, next paragraph.)

**The floor of a workload.** Add up what every step must read, divide by how fast the GPU can
read, and you have a time no engine can beat on that GPU. For the GPU benchmark of
`docs/benchmarks.md` (`bench/offline.py --preset qwen3-0.6b`: 256 requests, prompts and outputs
of 100..1024 tokens, Qwen3-0.6B's shape in bfloat16): a request with a prompt of p tokens and o
output tokens has o - 1 decode steps (its first token comes out of the prefill), and step t reads
p + t tokens of context. The weights (1.19 GB) are read once per step, and the batch runs for
about as many steps as the longest output. An H200 copies memory at about 4.26 TB/s (measured,
`docs/benchmarks.md`):
"""),
    code(r"""
from minisgl_edu.bench.offline import QWEN3_06B_CONFIG, make_workload

wl = make_workload(256, 100, 1024, QWEN3_06B_CONFIG["vocab_size"])  # the benchmark's own seeded workload
token_reads = sum(sum(p + t for t in range(1, o)) for p, o in zip(map(len, wl.prompts), wl.output_lens))
weight_bytes, bandwidth = 1.19e9, 4.26e12
steps = max(wl.output_lens)
print(f"{wl.output_tokens:,} output tokens; {token_reads / 1e6:.1f} M token-reads of KV cache over {steps} steps")
for name, dt in (("bfloat16", torch.bfloat16), ("fp8_e4m3", FP8)):
    kv_seconds = token_reads * KVPool.bytes_per_token(28, 8, 128, dt) / bandwidth
    print(f"KV pages in {name:>8}: KV {kv_seconds:.2f} s + weights {steps * weight_bytes / bandwidth:.2f} s "
          f"= a floor of {kv_seconds + steps * weight_bytes / bandwidth:.2f} s of reading")
"""),
    md(r"""
The engine runs this workload in 6.8-7.3 s on the H200 (21.8k output tokens/s, `docs/benchmarks.md`),
and its matmuls add about 0.4 s of arithmetic to the floor: the KV cache is the largest share of
the time that cannot go away. FlashInfer's bfloat16 decode kernel already reads the pages at about
95% of the copy bandwidth, so reading them faster is not the lever; reading *fewer bytes* is.

**FP8 pages.** `--kv-cache-dtype fp8_e4m3` (SGLang's and vLLM's name for it) stores every K and V
number in one byte instead of two: e4m3 is 1 sign bit, 4 exponent bits and 3 mantissa bits, and
its largest value is 448. Three mantissa bits mean neighbouring values are 1/8 apart relative to
their size, so rounding moves a number by up to 1/16 of itself. To use the whole range, each
vector is stored divided by a scale s = max|x| / 448, and s is kept beside it as a float32: one per
token and KV head, because a token's K/V are written once, when the token is computed, and a
per-page scale would have to be known before the page's later tokens are. The pool's `store`
quantizes, and every reader multiplies back:
"""),
    code(r"""
from minisgl_edu.kvcache.pool import dequantize_fp8, quantize_fp8

x = torch.tensor([[0.013, -0.27, 1.0, 2.6, -5.1, 9.9]])  # one small "head vector"
stored, scale = quantize_fp8(x)
back = dequantize_fp8(stored, scale, torch.float32)
print("scale s = max|x| / 448 =", f"{scale.item():.6f}")
print("stored e4m3 numbers:   ", stored.float().tolist()[0])
print("read back (x s):       ", [round(v, 4) for v in back.tolist()[0]])
print("relative error:        ", [f"{e:.1%}" for e in ((back - x).abs() / x.abs()).tolist()[0]])
"""),
    md(r"""
The same flag on the engine: the pages are FP8, and the same memory holds more tokens (here 3.76x
the float32 pages of the CPU; about 1.94x bfloat16's on a GPU, the scales taking the rest). On the
GPU the pool is sized by memory, so the pool itself grows; the ready line of the server says so.
"""),
    code(r"""
fp8_srv = LocalServer("smollm2-135m", device="cpu", max_running_requests=32, kv_cache_dtype="fp8_e4m3")
for name, server in (("auto", srv), ("fp8_e4m3", fp8_srv)):
    print(f"{name:>8}: {server.engine.pool.describe()}, {server.engine.pool.nbytes / 2**20:.0f} MiB")
"""),
    md(r"""
**What it costs in accuracy.** Measured, not assumed: `python -m minisgl_edu.bench.kv_fp8` answers
chat prompts greedily with float32 pages, then reads the same tokens through bfloat16 pages and
through FP8 pages (teacher-forced, so the first position where a format's top token differs is
where its own greedy answer would first leave float32's), and takes the logits' largest error.
The cell runs a small version on this model, 8 prompts x 24 tokens:
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from minisgl_edu.bench.cpu_weights import chat_prompts
from minisgl_edu.bench.kv_fp8 import compare

with torch.inference_mode():
    quality = compare(srv.engine.model, mc, chat_prompts(srv.tokenizer, 8), 24, ["float32", "bfloat16", "fp8_e4m3"])
for q in quality:
    print(f"{q.fmt:>8} pages: {q.identical} of 8 answers identical to float32's; first divergences "
          f"{sorted(d for d in q.first_divergence if d < q.tokens)}; largest logit error {q.max_logit_error:.2f} "
          f"(the logits' spread: {q.logit_std:.1f})")
"""),
    md(r"""
On the course machine the full run (32 prompts x 64 tokens, `docs/benchmarks.md`, "FP8 KV cache")
gave: bfloat16 pages keep 29 of 32 answers identical to float32's (the others leave at tokens 20,
53 and 55), largest logit error 0.36; FP8 pages keep 5 of 32, the others leave between token 0
and 58 (median 25), largest logit error 4.2, as large as the logits' own spread (4.0). A 135M model
with 64-number heads is about as sensitive to this as models get: every layer's scores and
outputs carry the rounding, and the next token is often a close call. Larger models are less
sensitive, but the point stands: FP8 pages halve the bytes and change the answers, and the
change has to be measured for the model that serves.

On the GPU, FlashInfer's own FP8 decode kernel (0.6.6) gains nothing at this shape: it reads FP8
pages at 1.89 TB/s, 0.94x the speed of its bfloat16 kernel reading twice the bytes, and it takes one
scale per layer where our pages carry one per token. The engine therefore decodes FP8 pages with a
Triton kernel of this project, `minisgl_edu/kernels/decode_attention_fp8.py`. It keeps the online
softmax and the merged splits of the small-batch kernel of section 4, but a program reads whole
tokens: a slot of the pool holds one token's keys for every KV head side by side (1 KB for
Qwen3-0.6B), so one program per request and split takes all of its query heads, reads blocks of
16 tokens x 8 heads in one piece, and lets each query head keep only its own KV head's scores
(a mask; the other products are computed and thrown away, which tensor cores can afford). Keys and
values are loaded as e4m3 rows, widened to float16 (exactly: every e4m3 number is a float16
number), and the scales are applied to the scores and the softmax weights rather than to every
number. `scripts/maintainer/gpu_fp8_kv.py`
times it against the bfloat16 kernels at the 256-request shape (`docs/benchmarks.md`, "FP8 KV cache").

## 7. GPU figures

On an NVIDIA GPU, `pip install -e .[gpu]` adds FlashInfer, and the engine turns on the three
optimisations by itself (`attention_backend="auto"`: FlashInfer, with this project's split-KV
Triton decode attention for decode batches of at most 4 requests; CUDA graphs for decode;
`overlap_loop`), plus Triton kernels of this project for small decode batches
(`EngineConfig.triton_kernels`, `minisgl_edu/kernels/`: fewer, larger kernels around attention,
matmuls made for a handful of rows). Two
settings differ from the CPU: the prefill budget is 8192 tokens instead of 2048, and the dtype is
bfloat16 instead of float32. None of this runs on a laptop; the measured figures, each with its
machine and command, are in `docs/benchmarks.md`. The headline ones:

| workload (`python -m minisgl_edu.bench.offline ...`) | machine | output tok/s |
|---|---|---|
| `--preset qwen3-0.6b`: 256 requests, prompts and outputs of 100..1024 tokens, Qwen3-0.6B shape with random bf16 weights, greedy, `ignore_eos` (2026-11-30) | one H200 | 21,974 (`transformers` `generate`: 750, 29.3×) |
| the same, one request alone: a 128-token prompt, 1,024 output tokens (2026-11-30) | one H200 | 1,302 |
| the 256 requests, one switch off at a time, one call on one machine (2026-12-01): all on / `--no-overlap` / `--no-cuda-graph` | one H200 | 22,292 / 15,108 / 11,504 |
| `--repeat 3` (the CPU preset: 16 requests, SmolLM2-135M, float32; `make bench`), medians (2026-11-29) | 2 cores of a Xeon, no GPU | 100.7 (`transformers`: 64.5, 1.56×) |

The last line is one you can run: `make bench` (it takes a few minutes on 2 cores).

## Summary

| optimisation | removes | where |
|---|---|---|
| continuous batching | one weight read per token (decode shares it across requests) | `_schedule_next_batch` |
| overlap scheduling | GPU idle while Python schedules and post-processes | `scheduler/overlap.py`, `overlap_loop` |
| a frozen start-up heap | the garbage collector's full collections stopping the loop (and the GPU) | `process.py`, `frozen_heap` |
| CUDA graphs | CPU launch overhead of hundreds of small kernels per decode step | `engine/cuda_graph.py` |
| FlashInfer | gathering and padding K/V pages in every layer; per-layer planning | `attention/flashinfer_backend.py` |
| prefix cache | recomputing a prompt's shared beginning | `kvcache/radix_cache.py` (chapter 06) |
| our Triton kernels (GPU, `EngineConfig.triton_kernels`; the benchmark's `--triton-kernels 0` turns them off) | several tiny kernels per layer at small batches (q/k norm, RoPE and K/V store in one; matmuls for a handful of rows) | `minisgl_edu/kernels/` |
| grouped decode heads (CPU) | reading each K/V once per query head | `attention/torch_backend.py` |
| FP8 KV cache (`--kv-cache-dtype fp8_e4m3`) | half the bytes per cached token, read at every decode step (twice the tokens in the same memory), at a measured cost in accuracy | `kvcache/pool.py`, `kernels/decode_attention_fp8.py` |

## Exercises

1. Extend the batching measurement to batch 32. Where does the speed-up stop growing on your
   machine, and why?
2. Measure the prefill time of a 1 000-token prompt with `max_prefill_tokens` 256 and 4096. Which
   is faster overall? Which keeps the other requests' decoding smoother?
3. Why does a CUDA graph suit a decode step but not a long prefill? What must be copied into the
   graph's input buffers before each replay, and why does a row of a token-row graph read more
   K/V than the same token in a prefill kernel?
4. In overlap scheduling, why must the pages of a finished request stay allocated until the next
   batch lands? Relate it to what you wrote in `exercises/02_abort.ipynb` and
   `exercises/04_page_allocator.ipynb`.
5. With FP8 pages the bundled model's pool holds 3.76x the tokens of float32 pages in the same
   memory, not 4x, and Qwen3-0.6B's 1.94x of bfloat16's, not 2x. Where do the missing bytes go, and
   why is the loss larger for SmolLM2? For the offline workload above, what floor would the FP8
   pages give if the scales were kept per page (16 tokens) instead of per token?
"""),
]
