"""Messages the API server receives (from the detokenizer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class UserReply:
    """New text for `uid` since the last reply; `finished` marks the last one."""

    uid: int
    incremental_output: str
    finished: bool
    finish_reason: Optional[str] = None
    num_prompt_tokens: int = 0
    num_output_tokens: int = 0
    error: Optional[str] = None  # set when the request was rejected (e.g. prompt too long)
    cached_tokens: int = 0  # prompt tokens reused from the prefix cache (the usage's cached_tokens)
    queue_seconds: Optional[float] = None  # on one reply only: the scheduler's wait before it first ran the request
    # (logprobs requested) one entry per token since the last reply, in OpenAI's chat shape:
    # {"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}, ...]}
    logprobs: list[dict] = field(default_factory=list)
    stamps: Optional[dict[str, float]] = None  # on the first reply with text: its path (message/stamps.py)


@dataclass
class BatchFrontendMsg:
    data: list = field(default_factory=list)


@dataclass
class SchedulerStatsMsg:
    """The scheduler's latest `SchedulerStats` as a plain dict: field name -> number for the
    gauges, and under "detail" the lists /dashboard draws (`scheduler/stats.py` says what each is).

    It travels scheduler -> detokenizer -> API server, which serves the numbers on /metrics and
    the whole on /dashboard/state. The scheduler sends one at most every `stats_interval`, only
    after a change. A dict rather than the `SchedulerStats` dataclass keeps this package free of
    scheduler (and torch) imports.
    """

    stats: dict = field(default_factory=dict)
