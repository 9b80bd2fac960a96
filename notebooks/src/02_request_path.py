from cells import code, md

CELLS = [
    md(r"""
# 02 · The path of a request

**Goal:** start the real server, send one streaming chat request, see the processes, cut a stream
half-way and watch the server give its memory back, run four tokenizer workers, then follow one
uid through `TokenizeMsg → UserMsg → DetokenizeMsg → UserReply → data: [DONE]` (and through
`AbortMsg → AbortBackendMsg`), naming the file and function that handles each hop.
**Expected time:** 30 minutes. How long the cells take depends on how busy the machine is: on the
2-core course machine they ran in 142 s under `pytest --nbval` at a load average (`uptime`) of 10
to 12. Much of it is the start-up of two servers: each of their processes imports torch and
transformers.

Chapter 01 listed the components. Here we watch them work, first from the outside (HTTP, the
process list and `/metrics`), then from the inside (the trace of one uid).
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
"""),
    md(r"""
## 1. Start the server

In a terminal you would type `python -m minisgl_edu.serve` (port 1919) and stop it with Ctrl+C.
A notebook needs more care: re-running a cell, or restarting the kernel, must not leave a server
behind that holds a port and a model in memory. `start_server` (`minisgl_edu/server/notebook.py`)
starts the very same command in a subprocess, on a free port, and returns once the server has
printed `ready in ... s` (it does so only after every worker has reported that it loaded what it
needs) and `/health` answers. It also:

* stops the server it started before, so re-running this cell leaves one server, not two;
* stops it when the kernel shuts down or restarts (an `atexit` hook);
* on Linux, ties the server to the kernel's life (`prctl(PR_SET_PDEATHSIG)`), so that a kernel
  killed outright takes the server with it. The workers already have the same tie to the
  server's main process (`process.py`), so the whole family goes.

`tests/test_notebook_server.py` checks all three (a second start leaves one server; an exit
without `stop_server()`, and a parent killed with SIGKILL, leave no process). A small KV cache
(`--num-pages 256`, 16 tokens a page) is plenty for this chapter and keeps the memory small.
"""),
    code(r"""
from minisgl_edu.server.notebook import group_processes, start_server, stop_server

server = start_server("--device", "cpu", "--num-pages", "256", "--cpu-weights", "float16")
print("server ready:", httpx.get(server.url + "/health", timeout=10).json())
"""),
    md(r"""
## 2. Look at the processes

`server/launch.py` (`start_workers`) starts each worker with `multiprocessing` ("spawn": a fresh
interpreter each) and names it; the worker sets its process title first thing, so `ps` shows
the name. The main process runs the API server; its children are the scheduler, the detokenizer
and one tokenizer per `--num-tokenizer`. In a terminal: `ps aux | grep '[m]inisgl'`. Here we ask
`ps` about every process of the server's process group (`server.processes()`):
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
pids = ",".join(str(p.pid) for p in server.processes())
print(subprocess.run(["ps", "-o", "pid,ppid,args", "-p", pids], capture_output=True, text=True).stdout)
"""),
    md(r"""
The same list without pids and ports (which change every run):
"""),
    code(r'''
def describe(srv) -> list[str]:
    """One line per live process of `srv`: what it is, and which process started it."""
    lines = []
    for p in srv.processes():
        if p.pid == srv.pid:
            name, parent = "python -m minisgl_edu.serve " + " ".join(srv.args), "this kernel"
        elif "resource_tracker" in p.name:
            name, parent = "python -c 'from multiprocessing.resource_tracker import main ...'", "the API server"
        else:
            name, parent = p.name, "the API server"
        assert p.ppid == (os.getpid() if parent == "this kernel" else srv.pid)
        lines.append(f"{name:<76} started by {parent}")
    return lines[:1] + sorted(lines[1:])  # the API server (main process) first


print("\n".join(describe(server)))
'''),
    md(r"""
The first line is the main process: the API server. Besides the three workers there is
multiprocessing's resource tracker, which Python starts with the first "spawn" worker; it removes
named semaphores and shared-memory blocks that a process leaves behind when it dies.

mini-sglang gives its processes the same names (`minisgl-TP0-scheduler`, `minisgl-tokenizer-0`,
`minisgl-detokenizer-0`), as names of its `multiprocessing.Process` objects. It does not set a
process title, so there `ps` shows each worker as a `python -c "from multiprocessing.spawn ..."`
line. It also starts no separate tokenizer by default (`--num-tokenizer 0`): then
`minisgl-detokenizer-0` does both jobs. This engine starts one (`--num-tokenizer 1`).

## 3. Send a streaming request

The same request as `curl -N http://127.0.0.1:1919/v1/chat/completions -d '{..., "stream": true}'`.
The answer comes back as Server-Sent Events: one `data: {json}` line per piece of text, and a last
line `data: [DONE]`. (We print the text pieces, not the whole JSON, which carries a timestamp.)
Nothing at all comes back before the first token exists, not even the status line and the
headers: `generate` (`server/generate.py`) waits for that token before it answers, so that a
prompt the server rejects still gets an HTTP 400 rather than a stream that has already begun with
200. A client that waits longer than its read timeout before the first token gives up.
"""),
    code(r"""
body = {"model": "smollm2-135m", "messages": [{"role": "user", "content": "What is KV Cache?"}],
        "max_tokens": 24, "temperature": 0, "stream": True}
deltas, last_line = [], None
with httpx.stream("POST", server.url + "/v1/chat/completions", json=body, timeout=120) as r:
    for line in r.iter_lines():
        if not line.startswith("data: "):
            continue
        last_line = line
        if line != "data: [DONE]":
            delta = json.loads(line[6:])["choices"][0]["delta"]
            if delta.get("content"):
                deltas.append(delta["content"])
print("text:", repr("".join(deltas)))
print("last line:", last_line)
"""),
    md(r"""
Each chunk is one `UserReply.incremental_output` from the detokenizer, one token's worth of text,
or several of them joined: when the API server has fallen behind, the replies waiting in a
request's queue go out as one chunk (`_join_waiting` in `server/generate.py`, one JSON encoding
and one socket write for all of them). So where the text is cut into chunks depends on how busy
the machine is, and changes from run to run; the text itself does not (greedy decoding, below).
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
# (the cuts between chunks depend on the machine's load: not checked)
print(len(deltas), "chunks:", deltas)
"""),
    md(r"""
**The answer is wrong.** A KV cache has nothing to do with KVM ("Kernel-based Virtual Machine"):
it holds the keys and values that the attention layers computed for the tokens already processed,
so that each new token computes only its own instead of those of the whole text again (chapter
06). SmolLM2 with 135 million parameters is a very small model and confuses the two. That is fine for this course,
which is about the engine, not the quality of the answer: the engine computed exactly what the
model says. `temperature: 0` means greedy decoding (always the most likely next token), so the
answer is the same on every run, which is what lets the notebooks check their outputs.

## 4. Cut a stream half-way: the abort path from the outside

A client that goes away (Ctrl+C in `curl`, a closed browser tab) must not leave the server
generating for nobody. We start a long answer (`max_tokens` 900, `ignore_eos` so it cannot end
early), read five chunks, then close the connection, and read the server's `/metrics` before,
during and after. `/metrics` serves the scheduler's latest statistics (`kv_pages_free`: pages
free or held only by the prefix cache, so reusable; `running_requests`; `generated_tokens_total`)
and the API server's own count of requests it waits on (`http_requests_in_flight`). The
scheduler sends new statistics after its steps (at most ten times a second) and when it goes
idle, so each reading is polled until it shows the state we wait for, with an upper bound
instead of a guess of how long that takes.
"""),
    code(r'''
def metrics(srv) -> dict[str, int]:
    text = httpx.get(srv.url + "/metrics", timeout=10).text
    return {k.removeprefix("minisgl_"): int(float(v)) for k, v in re.findall(r"^(minisgl_\w+) (\S+)$", text, re.M)}


def wait_for_metrics(srv, condition, what: str, bound_s: float = 120):
    """Poll /metrics until `condition(m)` holds; `bound_s` only stops a hang, it is no estimate."""
    deadline = time.monotonic() + bound_s
    while not condition(m := metrics(srv)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"/metrics did not show {what} within {bound_s} s: {m}")
        time.sleep(0.1)
    return m


idle = lambda m: m["running_requests"] == m["waiting_requests"] == m["http_requests_in_flight"] == 0
before = wait_for_metrics(server, idle, "an idle server")
long_body = {"messages": [{"role": "user", "content": "Tell me a long story about a robot."}],
             "max_tokens": 900, "ignore_eos": True, "temperature": 0, "stream": True}
chunks = []
with httpx.stream("POST", server.url + "/v1/chat/completions", json=long_body, timeout=120) as r:
    lines = r.iter_lines()  # kept in a variable: dropping the iterator would close the stream at once
    for line in lines:
        if line.startswith("data: {") and json.loads(line[6:])["choices"][0]["delta"].get("content"):
            chunks.append(json.loads(line[6:]))
            if len(chunks) == 5:
                break
    during = wait_for_metrics(server, lambda m: m["running_requests"] == 1
                              and m["kv_pages_free"] < before["kv_pages_free"], "the request running")
# Leaving the `with` block closes the connection: the client has hung up, mid-answer.
after = wait_for_metrics(server, lambda m: idle(m) and m["kv_pages_free"] == before["kv_pages_free"],
                         "the pages back")
uid = int(chunks[0]["id"].rsplit("-", 1)[1])  # the API server puts the uid in the response id
print(f"uid {uid}: the id of its chunks is {chunks[0]['id']!r}")
'''),
    md(r"""
The three readings. How many pages the request held when we looked, and how many tokens it got
to generate before the abort reached the scheduler, depend on the machine's speed:
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
keys = ["kv_pages_free", "kv_pages_total", "running_requests", "http_requests_in_flight", "generated_tokens_total"]
print(f"{'':<8}" + "".join(f"{k:>25}" for k in keys))
for name, m in [("before", before), ("during", during), ("after", after)]:
    print(f"{name:<8}" + "".join(f"{m[k]:>25}" for k in keys))
"""),
    md(r"""
What holds on every machine:
"""),
    code(r"""
generated = after["generated_tokens_total"] - before["generated_tokens_total"]
print("during: running", during["running_requests"], "| pages in use:", during["kv_pages_free"] < before["kv_pages_free"])
print("after:  running", after["running_requests"], "| waited on by the API server:", after["http_requests_in_flight"],
      f"| free pages {after['kv_pages_free']} of {after['kv_pages_total']}, as before: {after['kv_pages_free'] == before['kv_pages_free']}")
print("stopped early: generated", "fewer than" if generated < 900 else "all of", "the 900 tokens asked for")
"""),
    md(r"""
What happened in between, hop by hop (section 7 shows the same hops in a trace):

1. The API server notices the closed connection: uvicorn reports the disconnect and Starlette
   cancels the task that runs the response's generator, `stream_chunks` (`server/generate.py`);
   its `finally` calls `end_requests` → `end_request(state, gen)` (same file), which, for a request
   that has not finished, calls `FrontendState.abort_user(uid)` (`server/frontend.py`); that forgets the
   uid's reply queue and sends `AbortMsg(uid)` to that uid's tokenizer. `http_requests_in_flight`
   drops.
2. The tokenizer worker (`TokenizeWorker.handle`, `tokenizer/server.py`) turns it into
   `AbortBackendMsg(uid)` for the scheduler.
3. The scheduler (`Scheduler._process_msg` → `Scheduler.abort` → `abort_request` in
   `scheduler/abort.py`) removes the request from its queues and gives back its pages and its
   page-table row; `running_requests` drops and `kv_pages_free` is back where it was. You write
   `abort_request` yourself in `exercises/02_abort.ipynb`: do that exercise before you read
   `scheduler/abort.py`.

mini-sglang follows the same messages, with two differences. Its stream generator asks
`request.is_disconnected()` before each chunk (`stream_with_cancellation`) and sends the
`AbortMsg` from a separate task after a short delay (`abort_user`). And its scheduler frees an
aborted request through `_free_req_resources`, which also puts the tokens computed so far into
the prefix cache (whole pages of them); this engine frees them without caching
(`cache_it=False`). That is a choice, not a necessity: the full pages of an aborted request hold
keys and values as valid as a finished request's (chapter 08 weighs the two choices). mini-sglang's server has no `/metrics` or `/health` endpoints.

## 5. Four tokenizer workers

Each tokenizer worker applies the chat template and tokenizes one burst of requests after
another. With many clients one such process can become the bottleneck, so `--num-tokenizer N`
starts N of them. We start a second server with four; `start_server` first stops the one we had:
"""),
    code(r"""
first = server
server = start_server("--device", "cpu", "--num-pages", "64", "--num-tokenizer", "4", "--cpu-weights", "float16")
print("processes of the first server still running:", group_processes(first.pid))
print("\n".join(describe(server)))
"""),
    md(r"""
Which worker gets which request? `FrontendState.send_one` sends uid `u` to tokenizer `u % N`,
so that a uid's `AbortMsg` always takes the same pipe as its `TokenizeMsg` and cannot overtake it.
The server keeps no trace of its own, so we watch it another way: stop `minisgl-tokenizer-2` with
SIGSTOP (the process stays, frozen), send eight short requests at once, and see which get an
answer. We wait until six are answered *and* the scheduler is idle: then the other two are not
slow, they are stuck before the scheduler, in the frozen worker's inbox.
"""),
    code(r'''
def ask(i: int) -> int:
    """A short chat request; returns its uid (from the response id)."""
    r = httpx.post(server.url + "/v1/chat/completions", timeout=120, json={
        "messages": [{"role": "user", "content": f"Say the number {i}."}], "max_tokens": 4, "temperature": 0})
    return int(r.json()["id"].rsplit("-", 1)[1])


frozen = server.workers()["minisgl-tokenizer-2"]
os.kill(frozen, signal.SIGSTOP)
try:
    with ThreadPoolExecutor(8) as pool:
        requests = [pool.submit(ask, i) for i in range(8)]
        wait_for_metrics(server, lambda m: sum(f.done() for f in requests) == 6 and m["http_requests_in_flight"] == 2
                         and m["running_requests"] == m["waiting_requests"] == 0, "six answers and an idle scheduler")
        answered = sorted(f.result() for f in requests if f.done())
        print("answered while minisgl-tokenizer-2 was stopped:", answered)
        os.kill(frozen, signal.SIGCONT)
        print("answered after it went on:", sorted(f.result() for f in requests if f.result() not in answered))
finally:
    os.kill(frozen, signal.SIGCONT)  # never leave it frozen, even if a step above failed
'''),
    md(r"""
uids 2 and 6 are the ones with `uid % 4 == 2`: tokenizer 2 handled exactly those. mini-sglang
does this differently: its tokenizers all pull from one ZeroMQ address and ZeroMQ hands each
message to the next worker in turn, whatever its uid.

That is all we need from the real server. `stop_server()` stops it (and would run by itself
when the kernel exits):
"""),
    code(r"""
stop_server()
print("processes left:", group_processes(server.pid))
"""),
    md(r"""
## 6. Follow the uid inside

The multi-process server does not let us stop between two steps, and it records no trace. The
in-process runtime, `LocalServer`, runs the same worker code (the `TokenizeWorker` of
`tokenizer/server.py` in both roles, the `Scheduler` and its `Engine`) connected by in-memory
queues, with a small stand-in for the API server's `listen`; every component records what it does
to each uid in a trace (`minisgl_edu/trace.py`).
"""),
    code(r"""
from minisgl_edu import SamplingParams
from minisgl_edu.runtime import LocalServer
from minisgl_edu.trace import summarize

srv = LocalServer("smollm2-135m", device="cpu")
uid = srv.submit([{"role": "user", "content": "What is KV Cache?"}], SamplingParams(max_tokens=24))
print("uid:", uid, "| queues:", srv.snapshot().queues)
"""),
    md(r"""
`submit` did what the HTTP handler does: a new uid and a `TokenizeMsg` on the tokenizer's queue.
Nothing else has run yet. One `step()` runs each component once: the tokenizer turns the
`TokenizeMsg` into a `UserMsg`, the scheduler receives it, schedules a prefill batch and runs the
engine, the detokenizer turns the first token into text, and the frontend's `listen` routes the
`UserReply` to our uid.
"""),
    code(r"""
snap = srv.step()
print("batch:", snap.batch.phase, "uids", snap.batch.uids, "tokens", snap.batch.num_tokens)
print("first token:", snap.batch.next_tokens, "-> text so far:", repr(srv.result(uid).text))
srv.run_until_idle()
res = srv.result(uid)
print(res.finish_reason, repr(res.text))
print("same text as the HTTP stream:", res.text == "".join(deltas))
"""),
    md(r"""
The same (wrong) answer as from the server: same model, same greedy decoding. The trace of that
uid, in order (times left out; the per-token events are shown for the first three tokens only):
"""),
    code(r"""
print("\n".join(summarize(srv.trace(uid), max_tokens=3)))
"""),
    md(r"""
And as a timeline, one band per component. Events that happen once per token (a decode step,
the token, its `DetokenizeMsg` and `UserReply`) are ticks on one row, named once with their
count. Most of the time is spent in the scheduler: the prefill, then one decode step per token.
(Times differ from run to run; the shape does not.)
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
import matplotlib.pyplot as plt
from minisgl_edu.widgets.timeline import plot_timeline

fig = plot_timeline(srv.trace(uid), title=f"request {uid}")
plt.show()
"""),
    md(r"""
## 7. The abort path from the inside

Now the cut of section 4, in the trace. We start the same long answer, let it run for a prefill
and five decode steps, then call `srv.abort(uid)`, which is what `abort_user` does when a client
hangs up: an `AbortMsg` into the tokenizer's queue. `abort` then lets the tokenizer and the
scheduler's receive run once, so the pages are back when it returns.
"""),
    code(r"""
cut = srv.submit(long_body["messages"], SamplingParams(max_tokens=900, ignore_eos=True))
free_before = srv.snapshot().free_pages
for _ in range(6):  # a prefill, then five decode steps
    srv.step()
free_during = srv.snapshot().free_pages
srv.abort(cut)
print(f"free pages: before {free_before}, during {free_during}, after {srv.snapshot().free_pages}")
print(f"uid {cut}: {srv.result(cut).finish_reason}, {len(srv.result(cut).token_ids)} tokens, text {srv.result(cut).text!r}")
print()
print("\n".join(summarize(srv.trace(cut), max_tokens=2)))
"""),
    md(r"""
After the tokens: `api_server AbortMsg sent` (the client left), `tokenizer AbortMsg received` and
`AbortBackendMsg sent`, then the scheduler frees the request (`abort_request` sends the last
`DetokenizeMsg` with `token=-1 finished=True` on its way out, then `aborted` is recorded), the
detokenizer drops its decoder for the uid and sends a last, empty `UserReply`, and the frontend
closes the request without a `[DONE]`: nobody is there to read it.

The same picture as a widget, with a uid picker (both requests are there) and a Refresh button
(submit more with `srv.submit` and press Refresh):
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
from minisgl_edu.widgets import RequestTimeline

RequestTimeline(srv, cut)
"""),
    md(r"""
## 8. The same hops in the source

| hop | message | file | function |
|---|---|---|---|
| HTTP → uid | — | `server/api_server.py`, `server/generate.py` | `v1_chat_completions` (a route of `create_app`) → `generate` (`state.new_user()`) |
| API server → tokenizer | `TokenizeMsg` | `server/frontend.py` | `FrontendState.send_one` (tokenizer `uid % N`) |
| tokenizer | chat template, ids | `tokenizer/server.py`, `tokenizer/template.py` | `TokenizeWorker.handle`, `TokenizeManager.tokenize`, `encode_prompt` |
| tokenizer → scheduler | `UserMsg` | `tokenizer/server.py` | `TokenizeWorker._tokenize` |
| scheduler loop | — | `scheduler/scheduler.py` | `normal_loop` → `step`: `schedule` (`receive`, `_schedule_next_batch`), `run_batch` (`launch`, `land` → `_process_results`) |
| engine | — | `engine/engine.py`, `engine/sampler.py` | `Engine.forward_batch`, `Sampler.sample` |
| scheduler → detokenizer | `DetokenizeMsg` | `scheduler/scheduler.py` | `_process_results` (`self.io.send`) |
| detokenizer | text | `tokenizer/server.py`, `tokenizer/detokenizer.py` | `DetokenizeManager.detokenize`, `IncrementalDetokenizer.add` |
| detokenizer → API server | `UserReply` | `server/frontend.py`, `server/generate.py` | `FrontendState.listen` (by uid), `stream_chunks` → `data: [DONE]` |
| client gone | `AbortMsg` | `server/generate.py`, `server/frontend.py` | `stream_chunks` (`finally`) → `end_request` → `FrontendState.abort_user` |
| tokenizer → scheduler | `AbortBackendMsg` | `tokenizer/server.py` | `TokenizeWorker.handle` |
| scheduler frees | — | `scheduler/scheduler.py`, `scheduler/abort.py` | `_process_msg` → `Scheduler.abort` → `abort_request` |

Where mini-sglang (`python/minisgl/`) names these differently (`docs/minisglang_map.md` has
every name): the API server's state is `FrontendManager` (`server/api_server.py`) with the same
`new_user`, `send_one`, `listen` and `abort_user`, and its chat stream is
`stream_chat_completions` (no `stream_chunks`, no `generate.py`). `TokenizeWorker` and
`encode_prompt` do not exist there: the loop is written inside `tokenize_worker`, and
`TokenizeManager.tokenize` (`tokenizer/tokenize.py`) applies the chat template itself. The
detokenizer is `tokenizer/detokenize.py` (`DetokenizeManager`, no `IncrementalDetokenizer`). Its
`normal_loop` does one iteration per call (no `step`, `schedule` or `run_batch`), results are
handled in `_process_last_data` (no `_process_results`), and an `AbortBackendMsg` is handled in
`_process_one_msg` (no `Scheduler.abort`). One more difference seen above: this engine answers a
streaming request only once the first token exists, so a prompt that is rejected still gets an
HTTP 400; mini-sglang starts the stream at once.

In SGLang the same roles are in `python/sglang/srt/`: `entrypoints/http_server.py` and
`managers/tokenizer_manager.py` (frontend and tokenizer), `managers/scheduler.py`
(`event_loop_normal`, `event_loop_overlap`), `managers/tp_worker.py` and
`model_executor/model_runner.py` (engine), `managers/detokenizer_manager.py`.

The cell below checks that the functions of the table exist where it says (so the table stays true).
"""),
    code(r"""
import inspect
from pathlib import Path
import minisgl_edu
from minisgl_edu.engine import Engine
from minisgl_edu.engine.sampler import Sampler
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request
from minisgl_edu.server.frontend import FrontendState
from minisgl_edu.server.generate import end_request, generate, stream_chunks
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer
from minisgl_edu.tokenizer.server import DetokenizeManager, TokenizeManager, TokenizeWorker
from minisgl_edu.tokenizer.template import encode_prompt

ROOT = Path(minisgl_edu.__file__).parent.parent
for fn in [generate, FrontendState.new_user, FrontendState.send_one, TokenizeWorker.handle, TokenizeManager.tokenize,
           encode_prompt, TokenizeWorker._tokenize, Scheduler.normal_loop, Scheduler.step, Scheduler.schedule,
           Scheduler.receive, Scheduler._schedule_next_batch, Scheduler.run_batch, Scheduler.launch,
           Engine.forward_batch, Sampler.sample, Scheduler._process_results, DetokenizeManager.detokenize,
           IncrementalDetokenizer.add, FrontendState.listen, stream_chunks, end_request, FrontendState.abort_user,
           Scheduler._process_msg, Scheduler.abort, abort_request]:
    print(f"{str(Path(inspect.getsourcefile(inspect.unwrap(fn))).relative_to(ROOT)):<36} {fn.__qualname__}")
"""),
    md(r"""
## Summary

The API server gives the request a uid and sends a `TokenizeMsg` to tokenizer `uid % N`; the
tokenizer sends the token ids on as a `UserMsg`; the scheduler queues it, batches it, calls the
engine once per step, and sends a `DetokenizeMsg` per new token; the detokenizer sends text as
`UserReply`s; `listen` finds the waiting HTTP response by uid and streams it, ending with
`data: [DONE]`. A client that leaves turns into `AbortMsg` → `AbortBackendMsg`, and the scheduler
gives every page back. `start_server` runs the real server from a notebook without leaving one
behind.

## Exercises

1. In `server/generate.py` and `server/frontend.py`, find where the uid is created, where the
   `TokenizeMsg` is sent and where `UserReply`s are received. How does a reply find its HTTP
   response?
2. `_schedule_next_batch` and `launch`: which one decides *which* requests run, and which one
   calls the engine? The trace above cannot tell you: its `scheduled` events are recorded by
   `launch` itself (`_trace_scheduled`), just before it calls the engine, so they mark when a
   batch went to the engine, not who chose it. Separate the two with the runtime of section 6:
   submit a request, call `srv.plan()`, which runs only the first half of a step
   (`Scheduler.schedule`), and look at what it returns (`next_batch`) and at `srv.trace(uid)`;
   then call `srv.step()` and look again. Which half chose the batch, and which half recorded
   `scheduled`? Section 8's table says which function each half calls. `exercises/05_schedule.ipynb`
   asks you to write that decision without reading the engine's (do chapter 04, then exercise 5,
   before you read `_schedule_next_batch` in `scheduler/scheduler.py`).
3. Section 4 cut a stream and section 7 showed the hops. Cut one yourself *before* its first
   token: start a server again (`start_server`, section 1), freeze `minisgl-TP0-scheduler` with
   SIGSTOP (as section 5 did with a tokenizer), send a streaming request, let the client give up,
   then let the scheduler go on (SIGCONT) and watch `/metrics` until the server is idle with every
   page back. Remember that the client gets no bytes before the first token (section 3): with the
   scheduler frozen, `httpx.stream(...)` does not return, so there is no stream to close yet.
   Give the request a short read timeout instead (`timeout=httpx.Timeout(60, read=2)`): when it
   runs out, httpx raises `ReadTimeout` and closes the connection, as a client that gives up
   does. Which function sends the `AbortMsg` this time (read `generate` in
   `server/generate.py`)? The server records no trace, so ask the next question of the
   in-process runtime, which runs the same tokenizer and scheduler code: submit a request to
   `srv`, call `srv.abort(uid)` before any `srv.step()`, and read `srv.trace(uid)`. Was the uid
   in the scheduler when the `AbortBackendMsg` arrived, and where? Then do
   `exercises/02_abort.ipynb`, where you write the cleanup, before you read `scheduler/abort.py`.
4. Do `exercises/01_finish.ipynb` first: it asks you to write the check that finds a request
   finished (EOS, `max_tokens`, a stop string) without reading the package's. Then find where the
   scheduler calls that check and where its answer becomes `data: [DONE]`.
"""),
]
