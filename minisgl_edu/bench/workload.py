"""The online benchmark's workload: which prompts it sends, in which order, and when.

Where this sits on the request path: before it. `make_workload` returns one `PlannedRequest` per
request; the client in `bench/serving.py` turns each into an HTTP body and sends it at its
`arrival` time. Everything here is computed from a seed, never timed, so one seed gives the same
prompts and the same schedule on every machine.

Prompts need no download:
- completions: random token ids from `SAFE_TOKEN_IDS`, exactly `input_len` of them (sent as a
  list of ints in `prompt`, which our server, llama.cpp and vLLM accept);
- chat: questions from `chat_prompts.QUESTIONS`, one as it is, or numbered and joined until the
  text is about `input_len` tokens by `CHARS_PER_TOKEN`; or, with `prompt_set="edits"`, the
  requests of `chat_prompts.EDIT_REQUESTS` (hand a text back with a small change: the workload
  of speculative decoding), in order. That is an estimate (the client has no
  tokenizer, and the chat template adds its own tokens): the report counts what the server says,
  its usage `prompt_tokens`.

Arrivals: all at time 0 (`request_rate` inf), or a Poisson process: exponential gaps of mean
1/rate. With `repeat_prompts` R the same prompts are sent R times over, round after round, so
that later rounds find their prefixes in the server's cache.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from minisgl_edu.bench.chat_prompts import EDIT_REQUESTS, QUESTIONS

# Token ids that are ordinary text pieces in every vocabulary of 32k ids or more: the lowest ids
# are special or byte tokens in many vocabularies, and the special tokens of large ones (Llama 3,
# Qwen) sit above 128k.
SAFE_TOKEN_IDS = (1000, 30000)  # [low, high)
DEFAULT_INPUT_LEN = 128  # random-id prompts when input_len is None
CHARS_PER_TOKEN = 4  # English text through a BPE tokenizer, roughly
CHAT_PREAMBLE = "Please answer each of these questions briefly."

Prompt = Union[list[int], str]


@dataclass(frozen=True)
class PlannedRequest:
    index: int  # position in the run; RequestResult.index is the same number
    prompt_index: int  # which of the distinct prompts (the same in every round)
    round: int  # 0 on the first pass over the prompts, 1 on the first repeat, ...
    prompt: Prompt  # token ids (completions) or the user message (chat)
    arrival: float  # seconds after the start at which it is due to be sent


def random_token_prompts(n: int, input_len: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    low, high = SAFE_TOKEN_IDS
    return [[rng.randrange(low, high) for _ in range(input_len)] for _ in range(n)]


def estimated_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def chat_prompts(n: int, input_len: Optional[int], seed: int) -> list[str]:
    """`n` user messages. Prompt i starts with a different question (while there are enough),
    so that no two share more of a prefix than the chat template gives them."""
    rng = random.Random(seed)
    order = rng.sample(QUESTIONS, len(QUESTIONS))
    prompts = []
    for i in range(n):
        first = order[i % len(order)]
        if input_len is None:
            prompts.append(first)
            continue
        rest = rng.sample(QUESTIONS, len(QUESTIONS))
        lines = [CHAT_PREAMBLE, f"1. {first}"]
        # Cycle through the set again if one pass is not long enough.
        while estimated_tokens("\n".join(lines)) < input_len:
            lines.append(f"{len(lines)}. {rest[(len(lines) - 2) % len(rest)]}")
        prompts.append("\n".join(lines))
    return prompts


def edit_prompts(n: int) -> list[str]:
    """`n` requests to repeat a text or code with a small change, cycling through the set."""
    return [EDIT_REQUESTS[i % len(EDIT_REQUESTS)] for i in range(n)]


def arrival_times(n: int, request_rate: float, seed: int) -> list[float]:
    """Send times in seconds after the start: the first at 0, then exponential gaps of mean
    1/request_rate (a Poisson process); all 0 when the rate is inf."""
    if request_rate <= 0:
        raise ValueError(f"request_rate must be > 0 (inf for all at once), got {request_rate}")
    if math.isinf(request_rate) or n == 0:
        return [0.0] * n
    gaps = np.random.default_rng(seed).exponential(1.0 / request_rate, size=n - 1)
    return [0.0] + np.cumsum(gaps).tolist()


def make_workload(
    endpoint: str,
    num_prompts: int,
    input_len: Optional[int],
    repeat_prompts: int,
    request_rate: float,
    seed: int,
    prompt_set: str = "questions",
) -> list[PlannedRequest]:
    """num_prompts x repeat_prompts requests: the prompts in order, then again for each repeat."""
    if prompt_set == "edits":
        if endpoint != "chat" or input_len is not None:
            raise ValueError("prompt_set 'edits' is for the chat endpoint, without input_len")
        prompts: list[Prompt] = list(edit_prompts(num_prompts))
    elif endpoint == "chat":
        prompts = list(chat_prompts(num_prompts, input_len, seed))
    else:
        prompts = list(random_token_prompts(num_prompts, input_len or DEFAULT_INPUT_LEN, seed))
    total = num_prompts * repeat_prompts
    arrivals = arrival_times(total, request_rate, seed)
    return [
        PlannedRequest(
            index=i,
            prompt_index=i % num_prompts,
            round=i // num_prompts,
            prompt=prompts[i % num_prompts],
            arrival=arrivals[i],
        )
        for i in range(total)
    ]
