from cells import code, md

CELLS = [
    md(r"""
# 10 · Serving under load

**Goal:** see the server as its users see it. Drive the real server with the online benchmark,
read time to first token (TTFT) and inter-token latency (ITL) percentiles, and watch three
effects: requests queueing once the batch is full, a long prompt stalling the streams already
running, and what chunked prefill and mixed batches change about that stall. Last, a burst of
requests, timed stage by stage inside the server.
**Expected time:** 35 minutes. The cells run in about two minutes on 2 cores, much of it
the start-up of four servers.

Chapter 04 counted scheduler steps in one process. Here the same decisions are measured from the
outside, over HTTP, with a clock: what a user waits for before the first word appears (TTFT) and
how long the text stops between two words (ITL). The numbers depend on your machine and on what
else it runs, so the automatic notebook check ignores them; what to look at is their shape.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import matplotlib.pyplot as plt
from minisgl_edu.bench.serving import BenchConfig, BenchResult, plot_result, print_table, run_benchmark
from minisgl_edu.bench.serving_stats import percentiles
from minisgl_edu.bench.workload import random_token_prompts
from minisgl_edu.server.notebook import start_server, stop_server
"""),
    md(r"""
## 1. The server and the benchmark client

`start_server` (chapter 02) runs `python -m minisgl_edu.serve` with these options, the same for
every server of this chapter:

* `--max-running-requests 4`: at most four requests are admitted at once, so a queue shows up
  with a handful of clients instead of dozens;
* `--cache naive`: no prefix cache (chapter 06), so that a prompt sent a second time costs as
  much as the first and runs stay comparable;
* `--num-pages 256`, `--num-tokenizer 1`: a small KV cache and one tokenizer, to keep the start-up
  short.
"""),
    code(r"""
COMMON = ["--device", "cpu", "--num-tokenizer", "1", "--num-pages", "256", "--max-running-requests", "4",
          "--cache", "naive", "--cpu-weights", "float16"]
server = start_server(*COMMON, "--max-prefill-tokens", "2048")
print("server ready:", httpx.get(server.url + "/health", timeout=10).json())
"""),
    md(r"""
The client is `minisgl_edu/bench/serving.py`, the same one `python -m minisgl_edu.bench.serving`
runs in a terminal. It keeps `concurrency` requests in flight (a new one starts when one ends),
streams every answer and records when each piece of text arrived. Here: eight short chat
questions, one at a time, each answered with exactly 8 tokens (`ignore_eos`), greedy.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
def chat_load(concurrency: int) -> BenchResult:
    return run_benchmark(BenchConfig(base_url=server.url, endpoint="chat", num_prompts=8, output_len=8,
                                     concurrency=concurrency, ignore_eos=True, progress=False))


results = {1: chat_load(1)}
print_table(results[1])
"""),
    md(r"""
The table is laid out as SGLang's `bench_serving` prints it. Per request the client keeps a
`RequestResult`: `.ttft` (sent until the first text), `.itls` (every gap between two pieces of
text), `.latency` (sent until `data: [DONE]`). The rows that do not depend on the clock:
"""),
    code(r"""
s = results[1].summary
print(f"{s.succeeded} of {s.num_requests} requests answered, {s.output_tokens} output tokens,",
      "each request:", sorted({r.completion_tokens for r in results[1].requests}), "tokens")
"""),
    md(r"""
## 2. Queueing: 1, 4 and 8 clients at once

The same eight questions with 4 and then 8 requests in flight.
"""),
    code(r"""
for concurrency in (4, 8):
    results[concurrency] = chat_load(concurrency)
for concurrency, result in results.items():
    print(f"concurrency {concurrency}: {result.summary.succeeded} of {result.summary.num_requests} answered")
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
print(f"{'concurrency':>11} {'TTFT p50':>9} {'p99':>7} {'ITL p50':>8} {'p99':>7} {'E2E p50':>8} {'duration':>9}")
for concurrency, result in results.items():
    s = result.summary
    print(f"{concurrency:>11} {s.ttft_ms.p50:>6.0f} ms {s.ttft_ms.p99:>4.0f} ms {s.itl_ms.p50:>5.0f} ms "
          f"{s.itl_ms.p99:>4.0f} ms {s.e2e_ms.p50:>5.0f} ms {s.duration_s:>7.1f} s")
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
levels = list(results)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
for ax, name in zip(axes, ["ttft_ms", "itl_ms"]):
    for q, style in [("p50", "o-"), ("p90", "s--"), ("p99", "^:")]:
        ax.plot(levels, [getattr(getattr(results[c].summary, name), q) for c in levels], style, label=q)
    ax.set_xticks(levels)
    ax.set_xlabel("requests in flight (concurrency)")
    ax.set_ylabel("ms")
    ax.set_title("TTFT" if name == "ttft_ms" else "ITL")
    ax.legend()
fig.tight_layout()
plt.show()
"""),
    md(r"""
What to look for:

* **TTFT grows with concurrency.** At concurrency 4 the prompts arrive at almost the same time:
  each one's TTFT includes the prefill of the others in its batch, and the step that was
  running when it arrived. At concurrency 8 only four requests are admitted
  (`--max-running-requests 4`); the other four wait in the scheduler's waiting queue until the
  first four have finished, and their TTFT includes that whole wait. At concurrency 4 the last
  four requests waited too, but on the client's side, before they were sent: the benchmark
  starts a request only when one ends, and TTFT counts from the moment a request is sent. The
  work is the same in both runs (compare the durations); what changes is where the waiting
  happens, and at 8 the server's queue holds it.
* **ITL grows a little with the batch.** A decode step of four requests costs somewhat more than
  one of a single request, and every prefill (new requests joining) is a step in which the
  running requests get no token: a few long gaps, which move the p99 more than the median.

The benchmark's own figure for the run at concurrency 8, with TTFT and ITL histograms. The four
requests that waited for a running slot form a group of their own at the right of the TTFT
histogram; the four admitted first may spread out (the scheduler starts a prefill as soon as the
first request arrives, so the others can land in a second prefill batch).
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
plot_result(results[8])
"""),
    md(r"""
## 3. A long prompt arrives while others stream

Three chat requests stream 48 tokens each; once all three are decoding, a fourth client sends a
prompt of 1000 tokens (random token ids, the benchmark's completions workload) and asks for one
token. The streams run in a thread (the benchmark), the long prompt is one plain `httpx` request.
`/metrics` tells us when the streams are decoding (`minisgl_running_requests`, and
`minisgl_generated_tokens_total` for two steps more). We measure the
streams' ITL and note when, on the same clock, the long prompt was sent and answered.
"""),
    code(r'''
LONG_PROMPT = random_token_prompts(1, 1000, seed=1)[0]  # 1000 token ids


@dataclass
class LongPromptRun:
    streams: BenchResult  # the three chat streams
    long_sent: float  # when the long prompt was sent, seconds after the streams' start
    long_done: float  # when its answer came back
    long_usage: dict  # the server's token counts for it


def metric(srv, name: str) -> float:
    """One of the scheduler's numbers on the server's /metrics page (Prometheus text format)."""
    text = httpx.get(srv.url + "/metrics", timeout=10).text
    return float(re.search(rf"^minisgl_{name} (\S+)$", text, re.M).group(1))


def wait_until(condition, benchmark) -> None:
    deadline = time.monotonic() + 300  # only stops a hang, it is no estimate
    while not condition():
        if time.monotonic() > deadline or benchmark.done():
            raise RuntimeError("the streams did not get going")
        time.sleep(0.05)


def streams_and_a_long_prompt(srv, streams: int = 3, stream_tokens: int = 48) -> LongPromptRun:
    config = BenchConfig(base_url=srv.url, endpoint="chat", num_prompts=streams, concurrency=streams,
                         output_len=stream_tokens, ignore_eos=True, seed=1, progress=False)
    with ThreadPoolExecutor(1) as pool:
        start = time.perf_counter()  # the benchmark's own start follows within a few milliseconds
        running = pool.submit(run_benchmark, config)
        # All three decoding, then two more decode steps of all three: they stream steadily now.
        wait_until(lambda: metric(srv, "running_requests") == streams, running)
        tokens = metric(srv, "generated_tokens_total")
        wait_until(lambda: metric(srv, "generated_tokens_total") >= tokens + 2 * streams, running)
        sent = time.perf_counter() - start
        reply = httpx.post(srv.url + "/v1/completions", timeout=300,
                           json={"prompt": LONG_PROMPT, "max_tokens": 1, "temperature": 0})
        done = time.perf_counter() - start
        return LongPromptRun(running.result(), sent, done, reply.json()["usage"])


def facts(run: LongPromptRun) -> str:
    """What does not depend on the clock."""
    tokens = sorted({r.completion_tokens for r in run.streams.requests if r.ok})
    return (f"{run.streams.summary.succeeded} streams answered, {tokens} tokens each; the long prompt: "
            f"{run.long_usage['prompt_tokens']} prompt tokens, {run.long_usage['completion_tokens']} output token")


runs = {"budget 2048": streams_and_a_long_prompt(server)}
print(facts(runs["budget 2048"]))
'''),
    md(r"""
With the budget of 2048 tokens (`--max-prefill-tokens`, the CPU default) the whole prompt is one
prefill batch. Prefill goes first and a batch is prefill-only or decode-only (chapter 04), so
that one forward pass of 1000 tokens runs alone, and the three streams get no token until it
ends. The plot at the end of section 5 shows it as one tall gap in each stream.

## 4. Chunked prefill: a smaller budget

The same experiment with `--max-prefill-tokens 256`: the prompt is cut into chunks of at most
256 tokens, four prefill batches instead of one (256 + 256 + 256 + 232). A new server, since the
budget is a start-up option:
"""),
    code(r"""
server = start_server(*COMMON, "--max-prefill-tokens", "256")
runs["budget 256"] = streams_and_a_long_prompt(server)
print(facts(runs["budget 256"]))
"""),
    md(r"""
Each step is now short, but the streams still get no token in any of them: the unfinished
prompt stays at the head of the waiting queue, prefill goes first, so its four chunks run one
after the other, and only then is there a decode step. The stall is still seconds long:
the same 1000 tokens are computed, in four forward passes instead of one. What chunking buys is elsewhere: no forward pass is larger than 256 tokens, so the
memory a step needs for its activations stays bounded however long the prompt is, and the
prompt's pages are taken chunk by chunk. mini-sglang's `docs/features.md` gives the same reason:
chunked prefill "significantly reduc[es] peak memory usage".

## 5. Mixed batches: decode tokens ride along

`--enable-mixed-chunk` (`SchedulerConfig.mixed_chunk`) changes the batch: when a prefill batch is
scheduled, every running request's decode token joins it, in the same forward pass (a batch of
phase `"mixed"`, `Scheduler._schedule_mixed`). The decode tokens count against the budget, so
each chunk is 256 − 3 = 253 tokens here, and the prompt takes four steps again. But now each of
those steps also gives every stream its next token.
"""),
    code(r"""
server = start_server(*COMMON, "--max-prefill-tokens", "256", "--enable-mixed-chunk")
runs["budget 256, mixed"] = streams_and_a_long_prompt(server)
print(facts(runs["budget 256, mixed"]))
"""),
    md(r"""
The three runs side by side: the streams' ITL (all three streams), the longest gap, how many
gaps of stream 0 were more than five times the median one while the long prompt was in the
server, and how long the long prompt took from the client's side.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
print(f"{'':<18} {'ITL p50':>8} {'p99':>8} {'max':>8} {'long gaps':>10} {'long prompt':>12}")
for name, run in runs.items():
    itl = percentiles([x for r in run.streams.requests for x in r.itls], scale=1000)
    t = run.streams.requests[0].chunk_times
    long_gaps = sum(1000 * (b - a) > 5 * itl.p50 and b > run.long_sent and a < run.long_done
                    for a, b in zip(t, t[1:]))
    print(f"{name:<18} {itl.p50:>5.0f} ms {itl.p99:>5.0f} ms {itl.max:>5.0f} ms {long_gaps:>10} "
          f"{run.long_done - run.long_sent:>10.2f} s")
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, len(runs), figsize=(15, 3.8), sharey=True)
for ax, (name, run) in zip(axes, runs.items()):
    ax.axvspan(run.long_sent, run.long_done, color="tab:orange", alpha=0.25, label="long prompt in the server")
    for i, r in enumerate(run.streams.requests):
        # Each piece of text at the time it arrived, at the height of the gap before it.
        ax.plot(r.chunk_times[1:], [1000 * x for x in r.itls], ".", ms=5, label=f"stream {i}")
    ax.set_yscale("log")
    ax.set_title(name)
    ax.set_xlabel("seconds since the streams started")
axes[0].set_ylabel("gap before this token (ms)")
axes[0].legend(fontsize=8, loc="center right")
fig.tight_layout()
plt.show()
"""),
    md(r"""
How to read the plot: every dot is one piece of text a stream received, at the time it arrived
and at the height of the gap before it (log scale); the three streams decode in the same batches,
so their dots mostly lie on top of each other. The shaded band is the time from sending the
long prompt to its answer. Two kinds of dots are not about the long prompt: a high first dot
(a stream prefilled alone, whose next token waited for the prefill of the others: section 2 in
small), and dots at about twice the usual height near the end (a stream whose answer is over:
`ignore_eos` keeps it generating, and the special tokens it writes, such as `<|im_end|>`, carry
no text, so the next piece of text comes a step later).

* **Budget 2048:** the dots run along the height of one decode step, then one dot far above:
  the single prefill of 1000 tokens, during which no stream got a token.
* **Budget 256:** the same picture. Four short prefill steps in a row are still one long wait
  for a stream, since none of them carries a decode token.
* **Budget 256, mixed:** no dot that high. Instead one dot per chunk, at the height of one
  mixed step (a chunk of 253 tokens plus three decode tokens): more than a decode step, less
  than the whole prompt, the later chunks a little higher (a chunk attends over the prompt
  tokens already cached). The streams kept getting a token every step while the prompt was
  chunked in.
* **The price** is the decode tokens that the long prompt's steps also compute, and it is
  small: three decode tokens are little work beside a chunk of 253, and the long prompt's time
  (the last column of the table) is about that of the run without mixing. The torch attention
  backend (`attention/torch_backend.py`) pads the requests of one attention call to the longest,
  so it plans a mixed batch as two calls, the chunk and then the decode rows (`_Plan`): a decode
  row attends over its own context, as in a decode step, instead of being padded to the chunk's
  length. FlashInfer, on a GPU, takes the batch's uneven rows in one call.

The longest gap is what a reader of a stream notices as a freeze. With mixing it is bounded by
the time of one chunk, which `--max-prefill-tokens` sets; without mixing it grows with the
length of the prompt, whatever the budget. This pairing of small chunks with the running decodes
is the idea of Sarathi-Serve, the paper that mini-sglang's `docs/features.md` cites for chunked
prefill (its "stall-free" schedules).

**mini-sglang and SGLang.** mini-sglang chunks long prompts (`--max-prefill-length`, 8192 tokens,
the chunked request back at the head of its queue: `chunked_list + self.pending_list[...]` in
`PrefillManager.schedule_next_batch`), but never mixes: its `_schedule_next_batch` returns
`prefill_manager.schedule_next_batch(...) or decode_manager.schedule_next_batch()`, so it behaves
as the first two runs here. SGLang has the option this engine copies, `--enable-mixed-chunk`
(`ScheduleBatch.mix_with_running`), with `--chunked-prefill-size` as the chunk size.

## 6. A burst: where the first tokens wait

The moment of truth of a live demo: the whole room sends at once. The client's TTFT says how long
each request waited, not where. The server knows where: every process on the path stamps a
request as it passes (`minisgl_edu/message/stamps.py`), on the messages themselves, until the
first token's text is written to the connection; the API server keeps the latest requests' stamps
and serves them on `GET /debug/stages` (`server/stages.py`). The stamps are `time.monotonic()`,
one clock for all the server's processes, and only the path to the first token carries them, so
they stay on in every server.

A server with the defaults this time (no limit of four running requests, the prefix cache on),
and 32 chat questions sent at once, each answered with 8 tokens:
"""),
    code(r"""
from minisgl_edu.bench.stages import complete, fetch_stages, format_stage_table, largest_stage, plot_timeline
from minisgl_edu.message.stamps import POINTS, STAGES

server = start_server("--device", "cpu", "--num-tokenizer", "1", "--num-pages", "256", "--cpu-weights", "float16")
burst = run_benchmark(BenchConfig(base_url=server.url, endpoint="chat", num_prompts=32, concurrency=32,
                                  output_len=8, ignore_eos=True, progress=False))
records = fetch_stages(server.url, last=32)
print(f"{burst.summary.succeeded} of 32 answered; {len(complete(records))} with every point stamped")
print("points of one request, in order:", list(records[0]["stamps"]) == list(POINTS))
for name, start, end in STAGES:
    print(f"  {name:<15} {start} -> {end}")
"""),
    md(r"""
Eleven stages between twelve points. Per stage, over the 32 requests (milliseconds), and the
stage's share of all the time they spent before their first token:
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
print(format_stage_table(records))
name, share = largest_stage(records)
print(f"largest: {name} ({share:.0%})")
print(f"the client's TTFT: p50 {burst.summary.ttft_ms.p50:.0f} ms, p99 {burst.summary.ttft_ms.p99:.0f} ms")
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(10, 4.5))
plot_timeline(records, ax=ax, title="A burst of 32 on this CPU: each request's path to its first token")
fig.tight_layout()
plt.show()
"""),
    md(r"""
How to read it: one bar per request, in the order they arrived, starting when the first one
arrived. On 2 cores almost every bar is green: **prefill**. The 32 short prompts fit one prefill
batch (the CPU budget is 2048 tokens), so every request gets its first token when that one
forward pass ends: the first request waits for the last one's prompt as much as its own. A few
requests show a grey gap first (**to scheduler**): they arrived while the scheduler was already
in a step (the prefill of the one or two requests that came first), and a step is not
interrupted. HTTP, the tokenizer, the hops between processes and the detokenizer take a
millisecond or less each: on this machine a burst's wait is compute, and only a smaller batch
(the first requests answered earlier, the last ones later) would change its shape.

On a GPU the picture is the same at another scale. On an H200 (random weights of the Qwen3-0.6B
shape, the server's defaults, 2026-12-05) a burst of 256 chat prompts of ~540 tokens is ~140,000
prompt tokens, computed in prefill steps of 8,192 tokens. The last request's first token left the
server 273 ms after the request arrived (the median one: 186 ms): 65% of that time waiting in the
queue behind the prompts ahead of it, 24% in its own prefill, and under 10 ms (at the median) in
HTTP, the tokenizer, the hops and the detokenizer together. Prefill first, first come first
served: the last request of a burst waits for every prompt before it, so its first token comes
no earlier than the whole burst's prompts take to compute. The client saw 90-200 ms more than the
server (272 / 442 ms at p50 / p99), spent before the server's first stamp or after its last.
`docs/benchmarks.md` ("A burst, stage by stage" and "A burst of 256 on the H200, stage by stage")
has the CPU figures, the H200 table and timeline (drawn by this same tool), and how to measure them.

We are done with the server:
"""),
    code(r"""
stop_server()
"""),
    md(r"""
## Summary

| what the user sees | why | what changes it |
|---|---|---|
| TTFT grows with the number of clients | prompts share prefill batches; beyond `--max-running-requests` requests wait in the scheduler's queue | more running slots (and pages), fewer clients |
| a stream freezes when a long prompt arrives | prefill goes first and a batch is prefill-only or decode-only: the running streams wait through the whole prompt | `--enable-mixed-chunk` with a small `--max-prefill-tokens` |
| chunking alone does not end the freeze | the chunks run back to back | mixing; chunking bounds each step's memory and size |
| with mixing, gaps of one chunk each | every chunk step also computes one token per stream | a smaller budget: shorter gaps, more of them, a slower long prompt |

## Exercises

1. Try a budget of 64 with mixing (`start_server(*COMMON, "--max-prefill-tokens", "64",
   "--enable-mixed-chunk")`) and run `streams_and_a_long_prompt` again. How do the longest gap,
   the number of gaps and the long prompt's own time change? Then try 2048 with mixing: why does
   mixing alone not help when the prompt fits the budget?
2. Add a `request_rate` to `chat_load` (say `BenchConfig(..., request_rate=4, num_prompts=16)`):
   requests now arrive at random times instead of all at once. Which percentile of TTFT moves
   most as you raise the rate, and why?
3. Mixing is a scheduling decision. In `exercises/05_schedule.ipynb` you write
   `schedule_next_batch`; once it passes, sketch how a mixed batch would be built from your
   prefill batch and the running requests, and compare it with `Scheduler._schedule_mixed` in
   `minisgl_edu/scheduler/scheduler.py`.
"""),
]
