"""Real requests through the real engine, with one piece swapped for the student's.

Where this sits in the course: the graders use it to run a few chat requests on the default
model, once with the package's own code (the reference) and once with the student's function
plugged into the scheduler's injection point (`finish_fn`, `abort_fn`, `schedule_fn`, the page
allocator `cache.allocator`, the prefix cache `cache.prefix_cache`), and
compare token ids, finish reasons and pages. The engine (model weights, KV pool) is loaded once
and shared; each run gets a fresh scheduler, so a broken attempt can not leak into the next one.

Loading the model and the tokenizer, and the reference runs (computed once per process), happen
`untimed()`: a case's time limit counts only the work done with the student's code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Optional

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.limits import untimed
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

DEFAULT_MODEL = "smollm2-135m"
GRADING_CONFIG = dict(device="cpu", page_size=4, num_pages=256, max_running_requests=4, max_prefill_tokens=64)

PROMPTS = [
    [{"role": "user", "content": "Say hello."}],
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Écris un mot."}],
]


@dataclass
class RunResult:
    tokens: dict[int, list[int]]
    reasons: dict[int, Optional[str]]
    scheduler: Scheduler


@functools.lru_cache(maxsize=2)
def _engine_and_tokenizer(model: str):
    from minisgl_edu.engine import Engine
    from minisgl_edu.models import load_tokenizer

    engine = Engine(SchedulerConfig(model=model, **GRADING_CONFIG))
    return engine, load_tokenizer(engine.model_path)


@functools.lru_cache(maxsize=2)
def _tokenizer_only(model: str):
    from minisgl_edu.models import load_tokenizer, resolve_model

    return load_tokenizer(resolve_model(model))


def tokenizer(model: str = DEFAULT_MODEL):
    """The default model's tokenizer, without loading the model (the unit cases use it)."""
    with untimed():
        if _engine_and_tokenizer.cache_info().currsize:
            return _engine_and_tokenizer(model)[1]
        return _tokenizer_only(model)


@functools.lru_cache(maxsize=1)
def _tiny_model_dir() -> str:
    import atexit
    import shutil
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from minisgl_edu.models.testing import tiny_hf_config

    out = tempfile.mkdtemp(prefix="minisgl-grading-tiny-")
    atexit.register(shutil.rmtree, out, True)
    # Untied: with the input embeddings as its output layer, a random model repeats its last token.
    cfg = tiny_hf_config("llama", vocab_size=49152, max_position_embeddings=4096, tie_word_embeddings=False)
    with torch.random.fork_rng():  # the notebook's own random stream is left as it was
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(cfg)
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Writing model shards" bar in the notebook's output
    try:
        model.save_pretrained(out)
    finally:
        if bar:
            hf_logging.enable_progress_bar()
    tokenizer().save_pretrained(out)
    return out


def tiny_model() -> str:
    """A 2-layer Llama with seeded random weights and the default model's tokenizer, written once
    per process to a temporary directory. Its answers are nonsense but deterministic, varied, and
    take milliseconds a step, so a grader can run many steps of the real scheduler on it:
    `new_scheduler(model=tiny_model(), ...)`."""
    with untimed():
        return _tiny_model_dir()


def new_scheduler(model: str = DEFAULT_MODEL, **overrides) -> Scheduler:
    """A fresh scheduler on the shared, already loaded engine."""
    with untimed():
        engine, tok = _engine_and_tokenizer(model)
    cfg = SchedulerConfig(model=model, **{**GRADING_CONFIG, **overrides})
    return Scheduler(cfg, QueueIO(), engine=engine, tokenizer=tok)


def encode(scheduler: Scheduler, prompt) -> list[int]:
    from minisgl_edu.tokenizer.template import encode_prompt

    return encode_prompt(scheduler.tokenizer, prompt)


def collect(scheduler: Scheduler, result: Optional[RunResult] = None) -> RunResult:
    result = result or RunResult({}, {}, scheduler)
    for msg in scheduler.io.drain():
        result.tokens.setdefault(msg.uid, [])
        if msg.next_token >= 0:
            result.tokens[msg.uid].append(msg.next_token)
        if msg.finished:
            result.reasons[msg.uid] = msg.finish_reason
    return result


def run_requests(
    params: list[SamplingParams],
    prompts=None,
    setup: Callable[[Scheduler], None] = lambda s: None,
    max_steps: int = 2000,
    **overrides,
) -> RunResult:
    s = new_scheduler(**overrides)
    setup(s)
    for uid, (prompt, sp) in enumerate(zip(prompts or PROMPTS, params)):
        s.add_request(uid, encode(s, prompt), sp)
    steps = 0
    while not s.is_idle:
        s.step()
        steps += 1
        assert steps < max_steps, "the requests never finished (is a request never marked finished?)"
    return collect(s)


_REMEMBERED: dict[str, object] = {}


def remember(key: str, compute: Callable[[], object]):
    """`compute()` once per process per `key`, untimed: the package's own run that a student's
    run is compared with (greedy decoding makes it deterministic)."""
    if key not in _REMEMBERED:
        with untimed():
            _REMEMBERED[key] = compute()
    return _REMEMBERED[key]


def reference_run(key: str, params: list[SamplingParams], prompts=None, **overrides) -> RunResult:
    """`run_requests` with the package's own code, remembered under `key`."""
    return remember(key, lambda: run_requests(params, prompts, **overrides))


class _ProbeDone(BaseException):
    pass


class _Untouchable:
    def __getattr__(self, name):
        raise _ProbeDone


def fail_fast_if_stub(fn: Callable, *args) -> None:
    """Call `fn(<object that refuses every attribute>, *args)`: an untouched exercise stub raises
    NotImplementedError at once, before any model is loaded; anything else returns here and the
    case goes on with a real scheduler."""
    try:
        fn(_Untouchable(), *args)
    except NotImplementedError:
        raise
    except (Exception, _ProbeDone):
        pass


def require_passing(cases: list, impl) -> None:
    """Run `cases` on `impl` before an engine case: the model's work is the slow part, so it runs
    only for an answer that passes the cases that need no model (an untouched stub still reports
    "not implemented")."""
    for case in cases:
        try:
            case.run(impl)
        except NotImplementedError:
            raise
        except Exception as e:  # its own words: it may have passed above and failed only on this second run
            said = str(e) or type(e).__name__
            raise AssertionError(
                f"first make the case '{case.name}' pass: the real engine would only repeat that mistake, more "
                f"slowly. Run again just before this one, it failed: {said} (if it passed above, your answer "
                "gave different results on the same calls: it depends on something besides its inputs, such as "
                "object ids or state kept between objects)"
            ) from None
