"""Real requests through the real engine, with one piece swapped for the student's.

Where this sits in the course: the graders use it to run a few chat requests on the default
model, once with the package's own code (the reference) and once with the student's function
plugged into the scheduler's injection point (`finish_fn`, `abort_fn`, the page allocator), and
compare token ids, finish reasons and pages. The engine (model weights, KV pool) is loaded once
and shared; each run gets a fresh scheduler, so a broken attempt can not leak into the next one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Optional

from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

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


def new_scheduler(model: str = "smollm2-135m", **overrides) -> Scheduler:
    """A fresh scheduler on the shared, already loaded engine."""
    engine, tokenizer = _engine_and_tokenizer(model)
    cfg = SchedulerConfig(model=model, **{**GRADING_CONFIG, **overrides})
    return Scheduler(cfg, QueueIO(), engine=engine, tokenizer=tokenizer)


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
