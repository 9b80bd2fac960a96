from cells import code, md

CELLS = [
    md(r"""
# 08 · Finishing and cancelling

**Goal:** see the three ways a request ends normally (EOS, `max_tokens`, a stop string), how a
client's cancel reaches the scheduler, and check that every page comes back in every case.
**Expected time:** 25 minutes (the cells run in about 20 seconds).

Where we are on the path: right after the engine samples a token, `_process_results`
(`scheduler/scheduler.py`) appends it and asks `check_finish` (`scheduler/finish.py`) whether the
request is done. A cancel comes the other way: `AbortMsg` from the API server, `AbortBackendMsg`
from the tokenizer, `Scheduler.abort` frees the request wherever it is.

Do `exercises/01_finish.ipynb` before this chapter: the chapter shows the shape of the package's
`check_finish`, which that exercise asks you to write without reading `scheduler/finish.py`.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer
from minisgl_edu.trace import summarize

srv = LocalServer("smollm2-135m", device="cpu", page_size=8, num_pages=64, max_prefill_tokens=32)
eos = sorted(srv.scheduler.eos_ids)
print("EOS ids:", eos, [srv.tokenizer.convert_ids_to_tokens(i) for i in eos])
"""),
    md(r"""
## Three ways to finish

* **EOS**: the model produced an end-of-sequence token. For a chat model that is the token that
  closes the assistant's turn (`<|im_end|>` here). Reason `"stop"`; the EOS token itself is not
  part of the text. `Scheduler.eos_ids` is a *set*: every `eos_token_id` of the model's
  `generation_config.json` and `config.json` (some models list several) plus the tokenizer's. For
  SmolLM2 that is one id. mini-sglang compares with one id only, the tokenizer's `eos_token_id`.
* **`max_tokens`**: the request reached its output limit. Reason `"length"`.
* **a stop string**: the decoded text contains one of the request's `stop` strings. Reason `"stop"`;
  the stop string and what follows are not returned.

`ignore_eos=True` makes the model go on after EOS (benchmarks use it to get fixed lengths).
"""),
    code(r"""
question = [{"role": "user", "content": "Is the sky blue? Answer in one sentence."}]
cases = {
    "EOS": SamplingParams(max_tokens=40),
    "max_tokens": SamplingParams(max_tokens=3),
    "stop string": SamplingParams(max_tokens=40, stop=["blue"]),
    "ignore_eos": SamplingParams(max_tokens=12, ignore_eos=True),
}
for name, sp in cases.items():
    r = srv.generate(question, sp)
    print(f"{name:<12} {r.finish_reason:<7} {len(r.token_ids):>2} tokens, last {r.token_ids[-1]:>5} {r.text!r}")
"""),
    md(r"""
Look at the last token: the EOS case ends with an EOS id; with `ignore_eos` the model went past it
and wrote on. The `stop=["blue"]` request stopped as soon as `blue` appeared, and its text ends
before it.

The check itself, simplified from `scheduler/finish.py` (exercise 1 asks you to write it):

```python
def check_finish(req, eos_ids, decode):
    token = req.output_ids[-1]
    if not req.sampling_params.ignore_eos and token in eos_ids:
        return "stop"
    if req.sampling_params.stop and <a stop string is in the decoded tail>:
        return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None
```

When it returns a reason, `Scheduler._finish` marks the request finished, removes it from the
running set, and calls `CacheManager.release(req, cache_it=True)`: full pages go to the prefix
cache, the rest to the free list, and the page-table row is freed. The last `DetokenizeMsg` carries
`finished=True`, and the API server ends the stream with `data: [DONE]`.

## Cancelling

A client that closes its connection should not keep the engine busy. The API server notices the
disconnect (`abort_user`) and sends `AbortMsg(uid)`; the tokenizer forwards `AbortBackendMsg(uid)`;
the scheduler's `abort` removes the request from wherever it is and gives back all of its pages to
the free list. `srv.abort(uid)` sends the same messages.

Not caching an aborted request's pages is **this engine's choice, not a rule**. Its full pages hold
keys and values as valid as a finished request's, and a half-written page could not be reused
anyway: only full, computed pages are ever inserted into the prefix cache. mini-sglang does cache
them: its abort path (`_free_req_resources`) calls the same `cache_req(req, finished=True)` as a
finished request. This engine keeps the abort path to one rule, every page the request owns goes
back to the free list, which is simple to check page by page (exercise 2 grades exactly that);
the price is that a client who retries the same prompt has computed again whatever the
aborted request had computed beyond the prefix that was already cached.

What an abort frees, and where each piece goes (the calls it names are the package's answer to
`exercises/02_abort.ipynb`: if you have not done that exercise yet, do it before reading on):

| what | who frees it | where it goes |
|---|---|---|
| the request's own pages (computed after its cached prefix) | `abort_request` → `CacheManager.release(req, cache_it=False)` | the allocator's free list |
| prefix pages it shares with the prefix cache | the same `release` (`prefix_cache.unlock`) | stay in the cache, unlocked: evictable again when no one else holds them |
| its page-table row | the same `release` (`page_table.free_row`) | the table's free rows |
| its place in `waiting` / `running` and in `scheduler.reqs` | `abort_request` | gone |
| the detokenizer's decoder for the uid | `DetokenizeManager`, on the last `DetokenizeMsg(uid, -1, finished=True, "abort")` | dropped |
| the API server's reply queue for the uid (`ack_map`) | `end_request` (`server/generate.py`) → `FrontendState.abort_user`, before the `AbortMsg` leaves | dropped |

We cancel at three moments and count the free pages each time. A helper:
"""),
    code(r"""
def pages():
    s = srv.snapshot()
    return f"free {s.free_pages:>2}/{s.pages.num_pages}, rows {s.pages.rows}"


long_prompt = [{"role": "user", "content": "Summarise the history of computing, from the abacus and "
                "mechanical calculators to punched cards, vacuum tubes, transistors and microchips."}]
srv.reset()
print("start:           ", pages())
"""),
    md(r"""
**1. While waiting.** Submitted, not scheduled yet: it holds no pages, nothing to free but its place
in the queue.
"""),
    code(r"""
u = srv.submit(long_prompt, SamplingParams(max_tokens=30))
print("aborted:", srv.abort(u), "| reason:", srv.result(u).finish_reason, "|", pages())
"""),
    md(r"""
**2. Half-way through a chunked prefill.** The budget is 32 tokens, so the prompt takes several
prefill steps; after one, the request holds the pages of its first chunk.
"""),
    code(r"""
u = srv.submit(long_prompt, SamplingParams(max_tokens=30))
snap = srv.step()
print("after one chunk: ", pages(), "| cached tokens", snap.requests[u].cached_tokens,
      "of", snap.requests[u].prompt_tokens)
srv.abort(u)
print("after abort:     ", pages())
"""),
    md(r"""
**3. While decoding**, next to another request that must not be disturbed:
"""),
    code(r"""
u = srv.submit(long_prompt, SamplingParams(max_tokens=30))
other = srv.submit(question, SamplingParams(max_tokens=6, ignore_eos=True))
for _ in range(6):
    srv.step()
print("decoding:        ", pages(), "| uid", u, "has", len(srv.result(u).token_ids), "tokens")
srv.abort(u)
print("after abort:     ", pages())
srv.run_until_idle()
print("the other one:", srv.result(other).finish_reason, repr(srv.result(other).text))
print("at the end:      ", pages())
srv.scheduler.cache.check()
print("no page leaked")
"""),
    md(r"""
Why does uid 2's row read `[3, 2, 1, 0, 4, ...]`? The page allocator's free list is a stack:
`free()` appends each page to its end and `allocate()` pops from the end, so the page freed last
is handed out first. The abort in case 2 had freed pages 0, 1, 2, 3 in that order; the next
request got them back as 3, 2, 1, 0, then 4, 5, ... from the untouched part of the list. The
order does not matter to the engine: a row lists a request's pages in token order, and any page
can hold any part of any request. (mini-sglang's free list is a queue instead: it allocates from
the front and frees to the back.)

At the end the free count includes pages the finished request left in the prefix cache: they
are free for anyone who needs them. The trace of the request cancelled while decoding:
"""),
    code(r"""
print("\n".join(summarize(srv.trace(u), max_tokens=2)))
"""),
    md(r"""
The scheduler answers an abort with one last `DetokenizeMsg(uid, -1, finished=True, "abort")`
(no token): the detokenizer drops its decoder for the uid and passes a last `UserReply` on, and
the request ends at the API server too (`closed finish_reason=abort` in the trace). mini-sglang sends nothing back after an abort: its API server has
already forgotten the uid when it sends `AbortMsg`.

## Summary

* After every token: EOS (unless `ignore_eos`), a stop string, or `max_tokens` end the request;
  `_finish` releases its row and pages (full pages into the prefix cache).
* Cancel: `AbortMsg` → `AbortBackendMsg` → `Scheduler.abort`, from any stage; every page and the
  row come back, and `cache.check()` proves nothing leaked. Returning all of them to the free
  list, rather than caching the full ones as mini-sglang does, is this engine's choice.

## Exercises

1. `exercises/01_finish.ipynb`: write `check_finish` (EOS, `max_tokens`, stop strings, `ignore_eos`).
2. `exercises/02_abort.ipynb` (if chapter 02 has not sent you there already): write the abort:
   waiting, mid chunked prefill, decoding, already finished, unknown uid. The grader checks the
   pages after each.
3. What happens if an abort arrives while the request's batch is being computed? Find the line in
   `_process_results` that handles it.
4. An aborted request's full pages hold valid keys and values. Give one reason to put them into
   the prefix cache (as mini-sglang does) and one to give them all back (as this engine does).
   Think of a client that retries the same prompt, and of what the abort grader checks.
"""),
]
