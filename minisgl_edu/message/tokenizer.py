"""Messages a tokenizer / detokenizer worker receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from minisgl_edu.core import SamplingParams


@dataclass
class TokenizeMsg:
    """From the API server: a prompt as text, chat messages or token ids, plus sampling params."""

    uid: int
    text: Union[str, list[dict], list[int]]
    sampling_params: SamplingParams
    # (n > 1) the uids of the other n - 1 answers: the prompt is tokenized once, and each answer
    # becomes its own request in the scheduler
    more_uids: list[int] = field(default_factory=list)
    stamps: Optional[dict[str, float]] = None  # the path to the first token so far (message/stamps.py)


@dataclass
class AbortMsg:
    """From the API server when a client goes away: the tokenizer forwards it to the scheduler."""

    uid: int


@dataclass
class DetokenizeMsg:
    """From the scheduler: one new token of `uid`, and whether the request is done.

    `stop` repeats the request's stop strings so the detokenizer can hold back text that might
    turn out to be the start of one; `finish_reason` is set on the last message only.
    """

    uid: int
    next_token: int
    finished: bool
    finish_reason: Optional[str] = None
    stop: list[str] = field(default_factory=list)
    error: Optional[str] = None  # the scheduler rejected the request (next_token is then -1)
    cached_tokens: int = 0  # prompt tokens whose K/V came from the prefix cache (the usage's cached_tokens)
    queue_seconds: Optional[float] = None  # first token only: arrival at the scheduler -> first scheduled
    # (logprobs requested) next_token's logprob, and [token id, logprob] of the most likely tokens
    logprob: Optional[float] = None
    top_logprobs: list[list] = field(default_factory=list)
    stamps: Optional[dict[str, float]] = None  # first token only: its path so far (message/stamps.py)


@dataclass
class BatchTokenizerMsg:
    data: list = field(default_factory=list)
