from cells import code, md

CELLS = [
    md(r"""
# 04 · The scheduler loop

**Goal:** understand one iteration of the scheduler (`normal_loop`): receive, choose a batch
(`_schedule_next_batch`), run it (`launch`, then `land`), process the results. See prefill and decode
batches, the token budget, chunked prefill and continuous batching, one step at a time.
**Expected time:** 30 minutes. How long the cells take depends on how busy the machine is: on
the 2-core course machine they ran in 174 s under `pytest --nbval` at a load average (`uptime`)
of 11 to 13.

Where we are on the path: `UserMsg`s arrive from the tokenizer. The scheduler decides, every
iteration, which tokens the engine computes next. This is where requests wait.
"""),
    md(r"""
## The loop

`minisgl_edu/scheduler/scheduler.py`, simplified:

```python
def normal_loop(self):
    while not self._exit:
        self.step(block=True)

def step(self, block=False):
    batch = self.schedule(block)     # 1. receive: UserMsg -> waiting queue, AbortBackendMsg -> abort
                                     # 2. _schedule_next_batch: prefill if anyone waits, else decode
    if batch is None:
        return None
    return self.run_batch(batch)     # 3. launch: engine.launch_batch(batch) runs the model
                                     # 4. land: wait for its next tokens, then _process_results:
                                     #    per new token, _add_token (append, finish check),
                                     #    then the DetokenizeMsgs
```

(The decision itself, `schedule_next_batch` in the same file, is exercise 5: this chapter watches
it from outside; do the exercise before you read that function.) It blocks on its inbox only when
it has nothing to run. `_schedule_next_batch` is **prefill
first**: if a request waits (and fits), the next batch computes prompt tokens (so new requests get
their first token quickly); otherwise it is one **decode** batch of every running request, one
token each. So every batch is prefill-only or decode-only (unless you turn mixing on, below). mini-sglang decides the same
way (its `_schedule_next_batch` takes the prefill manager's batch, or else the decode manager's);
SGLang can also *mix* the two, see "What chunking buys" below.

Prefill batches have a **token budget**, `max_prefill_tokens` (2048 on CPU, 8192 on CUDA; 48 here,
so that short prompts show it; mini-sglang calls it `max_extend_tokens`, `--max-prefill-length`,
8192): the prompt tokens in one batch may not add up to more. A prompt
longer than what is left of the budget is cut: its first chunk runs now, the rest in the next
prefill batches (**chunked prefill**). What that buys, and what it does not, is measured below.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer

# A small budget so that chunking shows up with short prompts.
srv = LocalServer("smollm2-135m", device="cpu", max_prefill_tokens=48)
params = SamplingParams(max_tokens=5)
prompts = [
    [{"role": "user", "content": "Hi!"}],
    [{"role": "user", "content": "Explain in detail, for a student who knows a little Python and a "
                                 "little PyTorch, why a serving engine keeps a KV cache."}],
    [{"role": "user", "content": "Name a colour."}],
]
uids = [srv.submit(p, params) for p in prompts]
snap = srv.plan()  # tokenizer runs, the scheduler receives and chooses a batch, nothing computed yet
print("prompt tokens:", {u: r.prompt_tokens for u, r in snap.requests.items()})
print("waiting:", snap.waiting, "running:", snap.running)
"""),
    md(r"""
`srv.plan()` ran the first half of a step (`Scheduler.schedule`): the batch is chosen but not
run. (The split into `schedule` and `run_batch` is this engine's, so that a notebook can show a
batch before it runs; mini-sglang's `normal_loop` does both in one go.) Here it is. Each item says which tokens of a request this step computes: a start position
and a count.
"""),
    code(r"""
def show(batch):
    items = ", ".join(f"uid {it.uid}: {it.num_tokens} tok from {it.start}" for it in batch.items)
    return f"#{batch.batch_id} {batch.phase:<7} {batch.num_tokens:>3} tokens | {items}"

print(show(snap.next_batch))
"""),
    md(r"""
The budget of 48 tokens took all of uid 0's prompt and the first part of uid 1's; uid 2 did not
fit at all and keeps waiting. Now we step until everyone is done, printing what each step ran and
the tokens it sampled. A prefill chunk that does not reach the end of its prompt samples nothing:
there is no next token to predict yet.
"""),
    code(r"""
while not srv.is_idle():
    snap = srv.step()
    b = snap.batch
    done = f" finished {b.finished}" if b.finished else ""
    print(f"{show(b):<80} sampled {b.next_tokens}{done}")
"""),
    code(r"""
for u in uids:
    r = srv.result(u)
    print(u, r.finish_reason, repr(r.text))
"""),
    md(r"""
Read the steps: three prefill batches (uid 1's prompt in two chunks; uid 2 only got the 7 tokens
left of the second batch's budget, so its prompt was chunked too), then decode batches of all
three requests, one token each, until each has its 5 tokens (the first came from its prefill).
No request had to wait for another to finish: that is **continuous batching**.

## What chunking buys, and what it does not

One request is decoding when a prompt of about 180 tokens arrives, with a short one behind it.
We count the steps in which the decoding request gets no token, first with the budget of 48, then
with a budget large enough for the whole prompt (`srv.scheduler.max_prefill_tokens` is the
scheduler's budget; the cell changes it between the two runs).
"""),
    code(r'''
long_prompt = [{"role": "user", "content": "Read this and summarise it: "
                + "a serving engine batches requests and caches keys and values. " * 12}]


def steps_without_a_token(budget):
    """Steps in which a decoding request gets no token while a long prompt arrives."""
    srv.reset()
    srv.scheduler.max_prefill_tokens = budget
    first = srv.submit(prompts[0], SamplingParams(max_tokens=12))
    srv.step()
    srv.step()  # its prefill, then one decode step: it is decoding now
    srv.submit(long_prompt, SamplingParams(max_tokens=3))
    srv.submit(prompts[2], SamplingParams(max_tokens=3))
    waited = 0
    while True:
        b = srv.step().batch
        if first in b.next_tokens:
            return waited  # its next token: the wait is over
        waited += 1
        print(f"  {show(b)}")


for budget in (48, 4096):
    print(f"budget {budget}:")
    print(f"  -> steps in which uid 0, decoding, got no token: {steps_without_a_token(budget)}")
srv.reset()
srv.scheduler.max_prefill_tokens = 48  # back to this chapter's budget
'''),
    md(r"""
With a budget of 48 the long prompt took four prefill steps in a row, and the short prompt behind
it one more: a chunked prompt stays at the head of the queue and each of its chunks takes the
whole budget, except the last, whose leftover budget went to the next waiting prompt. uid 0 was
decoding all that time and got no token in any of those steps: **in this engine a decoding request
waits through every chunk of a long prompt**, because prefill goes first and a batch is never
mixed. With the large budget the same two prompts took a single prefill step. (mini-sglang behaves
the same way: its chunked request goes back to the front of the queue, `chunked_list +
pending_list[...]` in `PrefillManager.schedule_next_batch`.)

What chunking does buy here:

* **Bounded steps.** No forward pass computes more than `max_prefill_tokens` tokens, so the
  memory one step needs for its activations (and, in the torch backend, for its attention scores)
  and the time one step takes stay bounded however long a prompt is.
* **Pages as it goes.** The prompt's pages are taken chunk by chunk (`CacheManager.reserve`
  before each chunk). Admission is not piecemeal, though: `try_admit` lets a request in only if
  its whole run (prompt plus `max_tokens`) fits.
* **The leftover budget is used.** A short prompt rides along in the batch of the last chunk
  (uid 2 above); it does not get a step of its own between two chunks.

What would keep uid 0 decoding during the chunks is **mixing**: put the running requests' decode
tokens into the same batch as a prefill chunk, so that every step computes one chunk *and* one
token for each running request. SGLang does that with `--enable-mixed-chunk`, and so does this
engine with the same flag (`SchedulerConfig.mixed_chunk`, off by default so that this chapter
shows the plain loop; chapter 10 measures what it changes for the running streams). mini-sglang
never mixes.
"""),
    md(r"""
## Joining while others decode

A request that arrives while others are decoding does not wait for them to finish. At the next
iteration the scheduler sees it waiting, runs its prefill (prefill first), and from then on it
decodes in the same batches as the others.
"""),
    code(r"""
srv.reset()
a = srv.submit(prompts[0], SamplingParams(max_tokens=6))
for _ in range(3):
    print(show(srv.step().batch))
b = srv.submit(prompts[2], SamplingParams(max_tokens=3))  # arrives mid-decode
while not srv.is_idle():
    print(show(srv.step().batch))
"""),
    md(r"""
## Prefill steps and decode steps cost differently

A prefill step computes many tokens of a few requests (matrix × matrix: the hardware is busy);
a decode step computes one token for each running request (matrix × vector: the time goes into
reading the weights and the KV cache). Batching decode steps of many requests together is what
makes serving efficient: the weights are read once per step, for everyone. Chapter 09 measures it.

## The stepper

The widget below does the same, with buttons: **Step** runs the batch shown as "next batch",
**Run** steps until all are done, **Reset** aborts everything and submits the prompts again. The
table shows the batch about to run, the waiting queue, the running set and each request's text.
(To watch a live loop, call `srv.start(paused=True)` first: then **Run** and **Pause** control a
background thread.)
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from minisgl_edu.widgets import SchedulerStepper

srv.reset()
stepper = SchedulerStepper(srv, prompts, SamplingParams(max_tokens=5))
stepper
"""),
    md(r"""
Without a running kernel, the widget above is empty. Here is what it does when clicked, driven
from code: each `click()` is one press of the button.
"""),
    code(r"""
stepper.step_button.click()
snap = stepper.model.snapshot
print("after one step, next:", show(snap.next_batch))
stepper.run_button.click()
print("done:", stepper.model.done, "| steps:", len(stepper.model.history))
"""),
    md(r"""
The static picture of those steps: one row per request, one column per step; dark cells are
prefill (with the number of prompt tokens computed), light cells decode.
"""),
    code(r"""
import matplotlib.pyplot as plt

fig = stepper.figure()
plt.show()
"""),
    md(r"""
## Live mode

The same stepper over a scheduler loop that runs by itself in a background thread, like the
server's `normal_loop`. It starts paused: press **Step** a few times, then **Run** to let it go,
**Pause** to stop it between two iterations. Submit more requests from another cell
(`live.submit(...)`) while it runs and watch them join the batches. Under the stepper is the KV
page map of the same server (chapter 06 explains it): each request takes pages as it grows.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from IPython.display import display
from minisgl_edu.widgets import KVPageMap

live = LocalServer("smollm2-135m", device="cpu", max_prefill_tokens=48, page_size=8, num_pages=64)
live.start(paused=True)
live_stepper = SchedulerStepper(live, prompts, SamplingParams(max_tokens=40))
live_pages = KVPageMap(live)
display(live_stepper, live_pages)
"""),
    md(r"""
Press **Step** a few times, then run the cell below: it cancels the request that holds the most
pages, as a client disconnect does (chapter 08 follows that path), and its pages are free again
at once.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
snap = live.snapshot()
rows = snap.pages.rows  # uid -> its page-table row (the planned batch holds pages already)
if snap.steps > 0 and rows:
    victim = max(rows, key=lambda u: len(rows[u]))
    live.abort(victim)
    live_stepper.pause_button.click()  # stop the loop if it runs, and show the new plan
    live_pages.refresh_button.click()  # an abort is not a step: redraw the page map now
    print(f"aborted uid {victim}; its pages {rows[victim]} are free again")
else:
    print("nothing to cancel yet: press Step a few times first (or Reset, then Step);")
    print("run without a browser, the cells below show what the clicks and this cell would")
"""),
    md(r"""
### Without a browser

Run without a browser (`jupyter nbconvert --execute`, `pytest --nbval`) or read on the web,
nobody presses the buttons above: the live stepper shows no step and the abort cell has nothing
to cancel. The two cells below show what those clicks would have shown. They leave `live_stepper`
and `live_pages` alone (those stay yours to click): they build a second stepper and page map,
not displayed, over a second server `demo` set up exactly like `live`, press its **Step** five
times from code (`step_button.click()` runs the same callback as a click), and show the stepper's
view as it would be drawn: three prefill batches, then the first decode batches.
"""),
    code(r"""
from IPython.display import HTML

demo = LocalServer("smollm2-135m", device="cpu", max_prefill_tokens=48, page_size=8, num_pages=64)
demo.start(paused=True)
demo_stepper = SchedulerStepper(demo, prompts, SamplingParams(max_tokens=40))  # not displayed
demo_pages = KVPageMap(demo)  # not displayed either; it records a picture after every step
for _ in range(5):
    demo_stepper.step_button.click()  # one press of Step
    ran = demo_stepper.model.history[-1]
    print(f"step {demo_stepper.model.snapshot.steps} ran {show(ran)}; sampled {ran.next_tokens}")
display(HTML(demo_stepper.view.value))  # the stepper's view after five presses
"""),
    md(r"""
Then what the abort cell does, on `demo`: the request that holds the most pages is cancelled, and
its pages are free again at once; the others keep theirs. The page-table rows and the page map's
counts before and after, then the stepper's view: the aborted request is finished, with reason
`abort`. The next batch was chosen before the abort and still lists it; when that batch runs, the
scheduler leaves out the requests that finished in between (`run_batch` forwards
`batch.without_finished()`), so one more press of **Step** samples a token for the others only.
"""),
    code(r"""
from minisgl_edu.widgets.pagemap import page_counts

before = demo.snapshot().pages
rows = before.rows
victim = max(rows, key=lambda u: len(rows[u]))
print("page-table rows before:", dict(sorted(rows.items())))
print("pages before:", page_counts(before))
demo.abort(victim)
demo_stepper.pause_button.click()  # as in the abort cell: the stepper shows the new plan
demo_pages.refresh_button.click()  # and the page map a new picture
after = demo_pages.pages
print(f"aborted uid {victim}; its pages {rows[victim]} are free again")
print("page-table rows after: ", dict(sorted(after.rows.items())))
print("pages after: ", page_counts(after))
display(HTML(demo_stepper.view.value))
demo_stepper.step_button.click()
ran = demo_stepper.model.history[-1]
print(f"step {demo_stepper.model.snapshot.steps} ran {show(ran)}; sampled {ran.next_tokens}")
demo.stop()  # the second server's background loop is not needed any more
"""),
    md(r"""
## Summary

* One iteration: receive → `_schedule_next_batch` → `launch` (engine) → `land` (`_process_results`).
* Prefill first, under a token budget; long prompts are chunked; otherwise one decode batch of
  everyone running. A batch is prefill-only or decode-only by default (as in mini-sglang), so running
  requests wait through every chunk of a long prompt; chunking bounds the size of a step.
  New requests join between any two iterations.
* A request waits in the queue until its whole run is sure to fit in the KV cache (chapter 06).

## Exercises

1. Rerun the first part with `max_prefill_tokens=16`, then 4096. How many prefill steps, and
   which requests share them?
2. With `max_running_requests=1`, what happens to uid 2 while uid 0 decodes? Is that still
   continuous batching?
3. Do exercise 5 first: in `exercises/05_schedule.ipynb` you write the decision this chapter
   watched, `schedule_next_batch`, which `_schedule_next_batch` calls (`Scheduler.schedule_fn`),
   without reading the engine's.
4. Once your exercise 5 has full marks, compare it with the engine's `schedule_next_batch` in
   `scheduler/scheduler.py`: find where a request that does not fit stops the whole prefill batch
   instead of letting later requests overtake it. Why is first-come-first-served a reasonable
   choice here?
5. In `exercises/01_finish.ipynb` you write the finish check, `Scheduler.finish_fn`. Find where it
   is called: `_process_results` hands each new token of a request to `_add_token`, which appends
   the token and then asks the check whether the request is finished (for a request with a
   grammar, the grammar is asked first, and a grammar that ends the request decides).
"""),
]
