from cells import code, md

CELLS = [
    md(r"""
# 00 · Set-up check

**Goal:** make sure everything the course needs works on your machine, before chapter 01.
**Expected time:** 5 minutes (the cells run in about 20 seconds on a laptop CPU).

The course follows one chat request through a small but real serving engine, `minisgl_edu`, built
the way SGLang and mini-sglang are built: an API server, tokenizer and detokenizer workers, a
scheduler with continuous batching, an engine with a paged KV cache. Nothing needs a GPU or the
internet once the set-up has run: `make lab` does it (it creates `.venv`, installs everything and
converts the model), then opens these notebooks in JupyterLab; `make serve` and `make test` set up
the same way.

Run each cell from top to bottom (Shift+Enter). If a cell fails, the message says what to fix.
"""),
    code(r"""
import os
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # quiet warning from the tokenizers library

import sys
import torch
import minisgl_edu

print("Python 3.10 or newer:", sys.version_info >= (3, 10))
print("torch imported:", torch.__version__ is not None)
print("minisgl_edu imported from the repository:", "minisgl_edu" in minisgl_edu.__file__)
"""),
    md(r"""
Does this machine have an NVIDIA GPU? The course does not need one: every notebook runs on the
CPU, and the engine picks plain PyTorch attention there. (That CPU path is this engine's own:
mini-sglang, the engine the course is modelled on, runs on NVIDIA GPUs only.) (The output of this cell depends on your
machine, so the automatic notebook check ignores it.)
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
print("CUDA available:", torch.cuda.is_available())
print("CPU threads torch uses:", torch.get_num_threads())
"""),
    md(r"""
## The model

The default model is **SmolLM2-135M-Instruct**: a Llama-architecture chat model small enough for a
laptop (30 layers, hidden size 576, 9 query heads sharing 3 key/value heads, a 49 152-token
vocabulary). It ships inside a Python package as a quantized GGUF file; the first use converts it
once to an ordinary Hugging Face directory under `~/.cache/minisgl_edu`, so later loads take a
second or two. `resolve_model` returns that directory (and converts if needed).
"""),
    code(r"""
from pathlib import Path
from minisgl_edu.models import resolve_model

model_dir = Path(resolve_model("smollm2-135m"))
print(sorted(p.name for p in model_dir.iterdir() if p.suffix in (".json", ".safetensors")))
"""),
    md(r"""
## A first answer

`LLM` is the offline API: no server, no processes, the same scheduler and engine inside. Greedy
decoding (temperature 0) always picks the most likely token, so the answer below is the same on
every run and every machine.
"""),
    code(r"""
from minisgl_edu import LLM, SamplingParams

llm = LLM("smollm2-135m", device="cpu")
out = llm.generate([{"role": "user", "content": "What is the capital of France?"}],
                   SamplingParams(max_tokens=12))[0]
print("token ids:", out.token_ids)
print("text:", repr(out.text))
print("finish reason:", out.finish_reason)
"""),
    md(r"""
## Widgets

Later chapters pause the scheduler with buttons and draw the KV cache. They use `ipywidgets` and
`matplotlib`. If the buttons below do not appear in your notebook front end, install the widget
extension (`jupyterlab_widgets`, which `make lab` installs with the rest) and reload the page.
Each widget also has a static figure, so a notebook read on the web still shows something.
"""),
    code(r"""
# NBVAL_IGNORE_OUTPUT
import ipywidgets as widgets
import matplotlib
from minisgl_edu.widgets import SchedulerStepper, KVPageMap, RequestTimeline  # noqa: F401

button = widgets.Button(description="Click me")
button.on_click(lambda b: setattr(b, "description", "It works"))
button
"""),
    code(r"""
del llm  # give the memory back before the next chapter
print("Set-up looks good. Next: 01_modules.ipynb")
"""),
    md(r"""
## Exercises

The exercises live in `exercises/` and each ends with a `check(...)` cell that grades your code:

* `exercises/01_finish.ipynb`: write the finish check (EOS, `max_tokens`, stop strings);
* `exercises/02_abort.ipynb`: cancel a request at any stage and give back all of its memory;
* `exercises/03_detokenizer.ipynb`: turn tokens back into text, one at a time;
* `exercises/04_page_allocator.ipynb`: hand out and take back KV-cache pages;
* `exercises/05_schedule.ipynb`: choose the next batch (`schedule_next_batch`, which the
  scheduler's `_schedule_next_batch` calls);
* `exercises/06_prefix_cache.ipynb`: match, insert and evict in the radix prefix cache (`RadixCache`).
* `exercises/07_logits_chain.ipynb`: penalties, logit bias and a grammar's mask between the model and
  the sampler (`process_logits`).
* `exercises/08_verify.ipynb`: the verify step of speculative decoding (`verify_step`): which guessed
  tokens a request keeps, where a finish cuts them, and which KV pages go back.

For now, one warm-up: change the prompt above, and `max_tokens` to 40. Does the finish reason change?
Why might it say `stop` for some prompts and `length` for others? (Chapter 08 answers it.)
"""),
]
