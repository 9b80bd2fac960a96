from cells import code, md

CELLS = [
    md(r"""
# 06 · KV-cache pages and prefix reuse

**Goal:** see how the KV cache is cut into pages, how a request gets pages as it grows and gives
them back when it ends, and how a prompt that starts like an earlier one reuses that one's pages
(the prefix cache) instead of computing them again.
**Expected time:** 30 minutes (the cells run in about 20 seconds).

Where we are on the path: inside the scheduler process. Before every forward pass the scheduler
makes sure each request in the batch has room for the tokens about to be computed
(`CacheManager.reserve`); the engine writes their keys and values there; when a request ends,
`CacheManager.release` gives its pages back. Files: `kvcache/pool.py`, `kvcache/allocator.py`,
`kvcache/page_table.py`, `kvcache/manager.py`, and `kvcache/radix_cache.py`, the prefix cache: do
exercise 6 (`exercises/06_prefix_cache.ipynb`) before you read that one, since the exercise asks
you to write it without reading it. Likewise do exercise 4 (`exercises/04_page_allocator.ipynb`)
before you read `kvcache/allocator.py`.
"""),
    md(r"""
## Why pages

A request's final length is unknown when it starts. Giving each request one contiguous block for
its maximum length wastes most of it; growing a block means copying. Instead the cache is one big
pool of **slots** (one per token), grouped into **pages** of `page_size` tokens, as an operating
system pages memory. A request owns whole pages, in any order; its row in the **page table** lists
them. Token `i` of a request lives in page `row[i // page_size]`, at offset `i % page_size`. This
engine's default page size is 16 tokens (8 in this chapter, so that short prompts fill several
pages); mini-sglang's default is 1 token per page.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import matplotlib.pyplot as plt
from minisgl_edu import SamplingParams
from minisgl_edu.kvcache import pages_for
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu", page_size=8, num_pages=48)
pool = srv.engine.pool
print("K buffer [layers, slots, kv heads, head dim]:", list(pool.k.shape), "(one extra page is a dummy)")
print("bytes per token (K and V, all layers):", 2 * pool.num_layers * pool.num_kv_heads * pool.head_dim * 4)
print("pages for 1, 8, 9, 30 tokens:", [pages_for(n, 8) for n in (1, 8, 9, 30)])
"""),
    md(r"""
Every token costs 2 (K and V) × 30 layers × 3 KV heads × 64 × 4 bytes = 46 080 bytes here
(float32): a 4 000-token conversation takes 184 MB. Models with more layers and heads need far
more. That is why the cache, not the weights, decides how many
requests fit at once.

## A request takes pages, step by step
"""),
    code(r"""
system = {"role": "system", "content": "You are a patient teacher. Answer in one short sentence."}
a = srv.submit([system, {"role": "user", "content": "What is a page table?"}], SamplingParams(max_tokens=12))
for _ in range(4):
    snap = srv.step()
    r = snap.requests[a]
    print(f"step {snap.steps}: {snap.batch.phase:<7} tokens in cache {r.cached_tokens:>3} -> pages {r.pages}")
"""),
    md(r"""
The prefill wrote the prompt into enough pages for all of it; each decode step adds one token, and
a new page is taken only when the last one is full. (Before admitting a request at all,
`Scheduler.try_admit` checks that its *whole* run, prompt plus `max_tokens`, can fit: then a
running request never runs out of pages half-way, and nobody has to be pre-empted.)

## The page map

The widget colours each page by the request using it; pages kept in the prefix cache have a `C`
(a number after it: shared by that many requests); free pages are blank. It records a picture after
every step, and the slider goes back in time.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from minisgl_edu.widgets import KVPageMap

page_map = KVPageMap(srv)
page_map
"""),
    code(r"""
srv.run_until_idle()
print(repr(srv.result(a).text), srv.result(a).finish_reason)
snap = srv.snapshot()
print("rows:", snap.pages.rows, "| cached pages:", [p for p, c in enumerate(snap.pages.cached) if c])
print("free pages (cached ones count as free):", snap.free_pages, "of", snap.pages.num_pages)
"""),
    md(r"""
When uid 0 finished, its row was freed, but its **full** pages were not wiped: they went into the
**prefix cache** (a radix tree keyed by token ids; you write it in exercise 6). The keys and values
of a token depend only on the tokens before it, so any later prompt that starts with the same
tokens can reuse them. Cached pages nobody uses are still "free": they are evicted (least
recently used first) when a request needs the room. Only full pages go in: the last, half-filled
page (and the newest token, whose K/V was never computed) went back to the free list.

## Prefix reuse

Two more questions with the same system message. Chat prompts share a long beginning (template,
system message), so this is common in practice.
"""),
    code(r"""
b = srv.submit([system, {"role": "user", "content": "What is a radix tree?"}], SamplingParams(max_tokens=12))
c = srv.submit([system, {"role": "user", "content": "Why reuse a prefix?"}], SamplingParams(max_tokens=12))
snap = srv.step()
for it in snap.batch.items:
    r = snap.requests[it.uid]
    print(f"uid {it.uid}: prompt {r.prompt_tokens} tokens, computed from position {it.start} ({it.num_tokens} tokens)"
          f" -> pages {r.pages}")
print("prefix hits:", [(e.uid, e.data) for e in srv.tracer.events() if e.event == "prefix_hit"])
"""),
    md(r"""
Both prefills started after the shared part: the first pages of their rows are uid 0's old pages,
now used by both (the `C2` cells below), and only the rest was computed. The match stops at a
page boundary: a half-filled page is never shared.
"""),
    code(r"""
fig = page_map.figure()
plt.show()
srv.run_until_idle()
print("after both finish, rows:", srv.snapshot().pages.rows)
srv.scheduler.cache.check()  # every page is free, cached, or owned: nothing leaked
print("no page leaked")
"""),
    md(r"""
## Only a cached prefix is shared

Sharing is not a comparison between the prompts in the queue: at admission, a prompt is matched
against what the prefix cache *already holds*, and in this engine a prompt gets into the cache only
when its request finishes. So two prompts with the same beginning, sent together to a server whose
cache is empty, share nothing: both are computed from position 0. `srv.reset()` starts a new
scheduler, with an empty cache. We send two such prompts, then a third one while those two are
still decoding, then a fourth after they have finished:
"""),
    code(r'''
def starts(snap):
    """Where the prefill of each request in the batch that just ran began."""
    return {it.uid: it.start for it in snap.batch.items}


srv.reset()
questions = ["What is a page table?", "What is a radix tree?", "Why reuse a prefix?", "What is a page?"]
d, e = (srv.submit([system, {"role": "user", "content": q}], SamplingParams(max_tokens=6)) for q in questions[:2])
print("sent together to an empty cache:", starts(srv.step()))
srv.step()  # one decode step: both are decoding now
f = srv.submit([system, {"role": "user", "content": questions[2]}], SamplingParams(max_tokens=6))
print("sent while those two decode:    ", starts(srv.step()))
srv.run_until_idle()
g = srv.submit([system, {"role": "user", "content": questions[3]}], SamplingParams(max_tokens=6))
print("sent after they finished:       ", starts(srv.step()))
_ = srv.run_until_idle()
'''),
    md(r"""
The first three prefills all began at position 0; only the fourth, sent once the others had
finished and left their pages in the cache, began after the shared part. This is where mini-sglang
differs: it inserts a prompt into its prefix cache right after the prompt's prefill
(`cache_req(req, finished=False)` in `Scheduler._process_last_data`), so there the third request,
sent while the first two decode, would already share their beginning. Two prompts sent in the
same batch share nothing there either.
"""),
    md(r"""
## Without a prefix cache

The same three requests on an engine with `cache="naive"`, which gives every page back to the free
list when a request ends. Count the prompt tokens the engine had to compute:
"""),
    code(r"""
def prefill_tokens(server, prompts):
    server.generate(prompts[0], SamplingParams(max_tokens=12))
    uids = [server.submit(p, SamplingParams(max_tokens=12)) for p in prompts[1:]]
    server.run_until_idle()
    return sum(e.data["tokens"] for e in server.tracer.events()
               if e.event == "scheduled" and e.data["phase"] == "prefill")


prompts = [[system, {"role": "user", "content": q}]
           for q in ["What is a page table?", "What is a radix tree?", "Why reuse a prefix?"]]
srv.reset()
print("radix cache:", prefill_tokens(srv, prompts), "prompt tokens computed")
naive = LocalServer("smollm2-135m", device="cpu", page_size=8, num_pages=48, cache="naive")
print("naive cache:", prefill_tokens(naive, prompts), "prompt tokens computed")
"""),
    md(r"""
## Summary

* The KV cache is a pool of pages; a request's page-table row lists its pages in order; the
  scheduler reserves pages before each forward and releases them when the request ends.
* Finished requests leave their full pages in the prefix cache; a new prompt with the same
  beginning maps those pages into its own row and computes only the rest. Only what is already
  in the cache is shared: prompts sent together to an empty cache share nothing.
* `cache.check()` is the invariant: every page is free, in the prefix cache, or owned.

## Exercises

1. Set `page_size=1` and repeat the prefix-reuse cell. How many prompt tokens are reused now? What
   does a smaller page cost (think of the page table's size, and of the attention kernel)?
2. Submit more requests than the cache can hold (`num_pages=16`, `max_tokens=64`). What does the
   waiting queue look like, and when does each request start?
3. Abort a request mid-decode and draw the page map: all its own pages go back to the free list.
   That is this engine's choice (chapter 08): mini-sglang puts an aborted request's full computed
   pages into the prefix cache, as it does for a finished one. What does each choice cost, and
   what does it buy? (`exercises/02_abort.ipynb`)
4. `exercises/04_page_allocator.ipynb`: write the page allocator that `CacheManager` uses.
5. `exercises/06_prefix_cache.ipynb`: write the radix cache itself (`match_prefix`, `insert`,
   `evict`) that the engine uses in place of `kvcache/radix_cache.py`; read that file after the
   exercise, not before.
"""),
]
