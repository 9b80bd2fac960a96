from cells import code, md

CELLS = [
    md(r"""
# 01 · The modules and their roles

**Goal:** know which part of the engine does what, and which file to open for each, before we
follow a request through them in chapter 02.
**Expected time:** 15 minutes (the cells run in a few seconds).

A serving engine is not one loop around `model.generate`. It is a small pipeline of components,
each with one job, that pass **messages** to each other. Every request gets a number, its **uid**,
when it arrives, and that uid travels in every message about it. Following one uid is how we will
read the code.
"""),
    md(r"""
## The pipeline

```
client ──HTTP──▶ API server            main process (FastAPI)        server/api_server.py, frontend.py
                 │ TokenizeMsg(uid, text | messages, sampling_params)
                 ▼
             tokenizer worker          "minisgl-tokenizer-0"          tokenizer/server.py
                 │ UserMsg(uid, input_ids, sampling_params)
                 ▼
             scheduler + engine        "minisgl-TP0-scheduler"        scheduler/scheduler.py, engine/engine.py
                 │ DetokenizeMsg(uid, next_token, finished)
                 ▼
             detokenizer               "minisgl-detokenizer-0"        tokenizer/server.py
                 │ UserReply(uid, incremental_output, finished)
                 ▼
             API server listen() ──▶ SSE chunk … data: [DONE]
```

| component | its one job | where it waits | what it sends |
|---|---|---|---|
| API server | speak HTTP, give each request a uid, stream text back | on the client, and in `listen` for replies | `TokenizeMsg`, `AbortMsg` |
| tokenizer | chat template + text → token ids; reject prompts that can never run | on its inbox | `UserMsg`, `AbortBackendMsg` |
| scheduler | decide which tokens to compute next; own the KV cache | on its inbox when idle | `DetokenizeMsg` |
| engine | run one batch through the model and sample | (called by the scheduler) | next token ids |
| detokenizer | token ids → text that is safe to show | on its inbox | `UserReply` |

Why separate processes? Tokenizing and detokenizing are CPU work in Python; if the scheduler did
them, the GPU would sit idle while it does. In separate processes they overlap with the forward
pass. The scheduler and the engine share a process: the scheduler calls `engine.forward_batch`
directly, every iteration.
"""),
    code(r'''
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import inspect
from pathlib import Path

import minisgl_edu

ROOT = Path(minisgl_edu.__file__).parent


def where(obj) -> str:
    """The file (relative to the package) that defines obj, and its qualified name."""
    # unwrap: a decorator such as torch.inference_mode would otherwise point at torch's file
    path = Path(inspect.getsourcefile(inspect.unwrap(obj))).relative_to(ROOT.parent)
    return f"{str(path):<38} {obj.__qualname__}"
'''),
    md(r"""
## The package, one responsibility per folder

Each module starts with a docstring that says where it sits on the request path. The cell below
lists the folders and files; open any of them next to this notebook.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
# (ignored by the automatic check: files are added as the engine grows)
for sub in ["message", "tokenizer", "scheduler", "engine", "kvcache", "attention", "models", "runtime", "widgets"]:
    files = sorted(p.name for p in (ROOT / sub).glob("*.py") if p.name != "__init__.py")
    print(f"{sub + '/':<11}", ", ".join(files))
"""),
    md(r"""
## The messages

Messages are plain dataclasses (`minisgl_edu/message/`). Between processes, `message/codec.py`
turns them into bytes (msgpack) for ZeroMQ sockets. Look at their fields: from the `UserMsg` on,
the text is gone and only token ids travel. `uid` is in every one of them. The fields after the
first few serve requests that ask for more than text (chapter 11): `more_uids` and
`prompt_leader` for `n` answers to one prompt, `logprob`, `top_logprobs` and `logprobs` for the
probabilities of each token. `stamps` holds the times each process saw the request on its way to
the first token (chapter 10 reads them).
"""),
    code(r"""
import dataclasses
from minisgl_edu.message import TokenizeMsg, UserMsg, DetokenizeMsg, UserReply, AbortMsg, AbortBackendMsg

for cls in [TokenizeMsg, UserMsg, DetokenizeMsg, UserReply, AbortMsg, AbortBackendMsg]:
    print(f"{cls.__name__:<16}", [f.name for f in dataclasses.fields(cls)])
"""),
    md(r"""
## The functions to know by name

These are the names the rest of the course uses. `where` prints the file of this package that
defines each one, and its qualified name. About half of them are mini-sglang's names too; the
others are this engine's own (the table after the cell says what mini-sglang calls them).
"""),
    code(r"""
from minisgl_edu.server import frontend, generate, launch
from minisgl_edu.tokenizer.server import TokenizeWorker, TokenizeManager, DetokenizeManager, tokenize_worker
from minisgl_edu.tokenizer import IncrementalDetokenizer, encode_prompt
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.engine import Engine
from minisgl_edu.engine.sampler import Sampler

for fn in [launch.start_workers, frontend.FrontendState.listen, tokenize_worker, TokenizeManager.tokenize,
           encode_prompt, Scheduler.normal_loop, Scheduler._schedule_next_batch, Scheduler.launch,
           Engine.forward_batch, Sampler.sample, Scheduler._process_results, DetokenizeManager.detokenize,
           IncrementalDetokenizer.add, Scheduler.abort, generate.stream_chunks]:
    print(where(fn))
"""),
    md(r"""
### The same names in mini-sglang

mini-sglang (`python/minisgl/` in its repository) is the engine this course is modelled on. Where a
name above is not there, the same work is done elsewhere:

| this course | in mini-sglang |
|---|---|
| `launch.start_workers` | none: `start_subprocess`, inside `launch_server` (`server/launch.py`) |
| `FrontendState.listen` | `FrontendManager.listen` (`server/api_server.py`) |
| `tokenize_worker`, `TokenizeManager.tokenize` | the same names (`tokenizer/server.py`, `tokenizer/tokenize.py`) |
| `TokenizeWorker` | none: the loop is inside `tokenize_worker` |
| `encode_prompt` | none: inside `TokenizeManager.tokenize` |
| `Scheduler.normal_loop`, `_schedule_next_batch` | the same names (`scheduler/scheduler.py`) |
| `Scheduler.launch` (starts a batch on the engine) | `Scheduler._forward` |
| `Engine.forward_batch`, `Sampler.sample` | the same names (`engine/engine.py`, `engine/sample.py`) |
| `Scheduler.land` → `_process_results` (waits for a batch's tokens, then appends them) | `Scheduler._process_last_data` |
| `DetokenizeManager.detokenize` | the same name (`tokenizer/detokenize.py`), on a list of messages |
| `IncrementalDetokenizer.add` | none: `DecodeStatus` and the body of `DetokenizeManager.detokenize` |
| `Scheduler.abort` | none: the `AbortBackendMsg` branch of `_process_one_msg`, then `PrefillManager.abort_req` or `DecodeManager.abort_req` |
| `stream_chunks` (chapter 07) | `FrontendManager.stream_chat_completions` |

The messages (`TokenizeMsg`, `UserMsg`, `DetokenizeMsg`, `UserReply`, `AbortMsg`,
`AbortBackendMsg`) and the process names are mini-sglang's; this engine's messages carry a few
more fields (a finish reason, stop strings, an error). One difference in the processes: by
default mini-sglang starts no separate tokenizer (`--num-tokenizer 0`), and
`minisgl-detokenizer-0` tokenizes too; here one `minisgl-tokenizer-0` is started by default.
`docs/minisglang_map.md` has the whole map, with SGLang's names, and every place this engine
deliberately behaves differently from mini-sglang.
"""),
    md(r"""
## The same components in one process

For the notebooks we also run all of this **in one process**: `minisgl_edu.runtime.LocalServer`
holds the very same objects (a `TokenizeWorker` for each of the tokenizer and detokenizer roles,
the `Scheduler` with its `Engine`) connected by in-memory queues instead of sockets. Nothing runs
by itself: each `srv.step()` is one iteration of the scheduler loop, so we can stop and look
inside between two iterations. There is one copy of the scheduling logic, used by both.
"""),
    code(r"""
from minisgl_edu.runtime import LocalServer

srv = LocalServer("smollm2-135m", device="cpu")
print("scheduler:", type(srv.scheduler).__name__, "| engine:", type(srv.engine).__name__)
print("tokenizer worker:", type(srv._tokenizer_worker).__name__,
      "with", type(srv._tokenizer_worker.tokenize_manager).__name__)
print("detokenizer worker:", type(srv._detokenizer_worker).__name__,
      "with", type(srv._detokenizer_worker.detokenize_manager).__name__)
print("in-memory queues:", list(srv.snapshot().queues))
"""),
    code(r"""
from minisgl_edu import SamplingParams

uid = srv.submit([{"role": "user", "content": "Name a colour."}], SamplingParams(max_tokens=8))
srv.run_until_idle()
res = srv.result(uid)
print("uid", uid, "->", res.token_ids, repr(res.text), res.finish_reason)
print("components that touched it:", list(dict.fromkeys(e.component for e in srv.trace(uid))))
"""),
    md(r"""
## Summary

* Five components (the table above) in three kinds of process: the API server (main process), the
  tokenizer and detokenizer workers, and the scheduler with the engine inside it. They pass `TokenizeMsg → UserMsg → DetokenizeMsg → UserReply`.
* The uid threads through all of them; it is how replies find their request again.
* `LocalServer` is the same pipeline in one process, for looking inside.

## Exercises

1. For each message above, name the component that sends it and the one that receives it.
2. `AbortMsg` and `AbortBackendMsg` have only a uid. Why is that enough? What must the scheduler
   do when it gets one? (You will write it in `exercises/02_abort.ipynb`.)
3. Which component would you change to support a new chat format? To change how tokens are
   picked? To give a request more KV-cache memory? Write down the file for each.
4. Open `exercises/03_detokenizer.ipynb` and read its first cell: which component's job is it?
"""),
]
