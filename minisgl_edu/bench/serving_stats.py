"""The online benchmark's numbers: one record per request, and the statistics over them.

Where this sits on the request path: after it. The client in `bench/serving.py` fills one
`RequestResult` per request with the times it saw (seconds after the benchmark's start, read
from its clock); everything else here is a pure function of those records, so a test can give
known times and check the exact percentiles.

What the latencies mean (the definitions of SGLang's and vLLM's `bench_serving`):
- TTFT: request sent -> first chunk that carries output text.
- ITL: every gap between two successive output chunks. A server may put several tokens in one
  chunk (ours does when the detokenizer holds back an incomplete character); the gap is then the
  time between chunks, not per token.
- TPOT: (last output chunk - first output chunk) / (completion_tokens - 1): the decode time per
  token after the first, with tokens counted from the server's usage, so bundled chunks count.
- E2E latency: request sent -> end of the stream (`data: [DONE]`).
Output tokens come from the usage chunk; a server that sends none is counted by its chunks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

import numpy as np


@dataclass
class RequestResult:
    index: int  # position in the run (the PlannedRequest's)
    prompt_index: int
    round: int
    scheduled_at: float  # when it was due to be sent (s after the start)
    sent_at: Optional[float] = None  # None: never sent (the server could not be reached)
    chunk_times: list[float] = field(default_factory=list)  # arrival of each chunk with output text
    done_at: Optional[float] = None  # end of the stream, or the moment it failed
    prompt_tokens: Optional[int] = None  # from the server's usage chunk
    completion_tokens: Optional[int] = None
    cached_tokens: Optional[int] = None  # usage.prompt_tokens_details.cached_tokens; None if not reported
    text: str = ""
    error: Optional[str] = None  # None: succeeded
    http_status: Optional[int] = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def output_tokens(self) -> int:
        return self.completion_tokens if self.completion_tokens is not None else len(self.chunk_times)

    @property
    def ttft(self) -> Optional[float]:
        if not self.ok or not self.chunk_times or self.sent_at is None:
            return None
        return self.chunk_times[0] - self.sent_at

    @property
    def itls(self) -> list[float]:
        if not self.ok:
            return []
        return [b - a for a, b in zip(self.chunk_times, self.chunk_times[1:])]

    @property
    def tpot(self) -> Optional[float]:
        if not self.ok or len(self.chunk_times) < 2 or self.output_tokens < 2:
            return None
        return (self.chunk_times[-1] - self.chunk_times[0]) / (self.output_tokens - 1)

    @property
    def latency(self) -> Optional[float]:
        if not self.ok or self.sent_at is None or self.done_at is None:
            return None
        return self.done_at - self.sent_at

    def to_dict(self) -> dict:
        """The record and what is derived from it (the JSON output's per-request entry)."""
        return {**asdict(self), "ttft": self.ttft, "itls": self.itls, "tpot": self.tpot, "latency": self.latency}


@dataclass(frozen=True)
class Percentiles:
    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


def percentiles(values: Sequence[float], scale: float = 1.0) -> Optional[Percentiles]:
    """mean, p50/p90/p99 (numpy's linear interpolation between the nearest ranks) and max of
    `values` times `scale`; None when there are no values."""
    if len(values) == 0:
        return None
    v = np.asarray(values, dtype=np.float64) * scale
    p50, p90, p99 = np.percentile(v, [50, 90, 99]).tolist()
    return Percentiles(count=len(v), mean=float(v.mean()), p50=p50, p90=p90, p99=p99, max=float(v.max()))


def output_tokens_per_bin(requests: Sequence[RequestResult], duration: float, bin_s: float = 1.0) -> list[float]:
    """Output tokens that arrived in each `bin_s` window from the start, for the throughput over
    time. The usage chunk gives only a request's total, so its tokens are spread evenly over its
    output chunks."""
    bins = [0.0] * max(1, int(np.ceil(duration / bin_s)))
    for r in requests:
        if not r.ok or not r.chunk_times:
            continue
        per_chunk = r.output_tokens / len(r.chunk_times)
        for t in r.chunk_times:
            bins[min(int(t // bin_s), len(bins) - 1)] += per_chunk
    return bins


@dataclass(frozen=True)
class Summary:
    num_requests: int
    succeeded: int
    failed: int
    duration_s: float  # from the start to the end of the last request
    input_tokens: int  # usage prompt_tokens of the requests that succeeded
    output_tokens: int
    cached_tokens: Optional[int]  # sum of those reported; None when no request reported any
    request_throughput: float  # succeeded requests / duration
    output_throughput: float  # output tokens / duration
    total_throughput: float  # (input + output tokens) / duration
    peak_output_throughput: float  # the busiest 1 s bin
    ttft_ms: Optional[Percentiles]
    itl_ms: Optional[Percentiles]
    tpot_ms: Optional[Percentiles]
    e2e_ms: Optional[Percentiles]
    errors: dict[str, int]  # each distinct error and how many requests had it


def summarize(requests: Sequence[RequestResult], duration: float) -> Summary:
    good = [r for r in requests if r.ok]
    errors: dict[str, int] = {}
    for r in requests:
        if not r.ok:
            errors[r.error] = errors.get(r.error, 0) + 1
    input_tokens = sum(r.prompt_tokens or 0 for r in good)
    output_tokens = sum(r.output_tokens for r in good)
    reported = [r.cached_tokens for r in good if r.cached_tokens is not None]

    def rate(x: float) -> float:
        return x / duration if duration > 0 else 0.0

    return Summary(
        num_requests=len(requests),
        succeeded=len(good),
        failed=len(requests) - len(good),
        duration_s=duration,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_tokens=sum(reported) if reported else None,
        request_throughput=rate(len(good)),
        output_throughput=rate(output_tokens),
        total_throughput=rate(input_tokens + output_tokens),
        peak_output_throughput=max(output_tokens_per_bin(good, duration)),
        ttft_ms=percentiles([r.ttft for r in good if r.ttft is not None], 1000),
        itl_ms=percentiles([x for r in good for x in r.itls], 1000),
        tpot_ms=percentiles([r.tpot for r in good if r.tpot is not None], 1000),
        e2e_ms=percentiles([r.latency for r in good if r.latency is not None], 1000),
        errors=errors,
    )
