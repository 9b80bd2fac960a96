"""Stage stamps: when one request passed each point of its path to the first token.

Where this sits on the request path: on the messages themselves. The API server starts a dict of
stamps for each request and sends it with the `TokenizeMsg`; every process that handles the request
on its way to the first token adds its own points and passes the dict on (`UserMsg`, the first
token's `DetokenizeMsg`, the first `UserReply` with text), so the API server ends up with the
whole path in one place (`server/stages.py`, GET /debug/stages, /metrics).

    received ─ api_sent ─ tokenizer_recv ─ tokenizer_sent ─ scheduler_recv ─ admitted ─ first_token
             ─ scheduler_sent ─ detokenizer_recv ─ detokenizer_sent ─ api_recv ─ sse_write

A stamp is `time.monotonic()`: one clock for every process of the server (a system-wide clock on
Linux, macOS and Windows) that never jumps backwards, unlike `time.time()`. Only the path to the
first token carries stamps; the later tokens' messages carry `None`, so decoding pays nothing.
"""

from __future__ import annotations

import time
from typing import Optional

Stamps = dict[str, float]

# The points in the order a request passes them.
POINTS = (
    "received",  # API server: the HTTP request's headers are in (its body not read yet)
    "api_sent",  # API server: body parsed and checked, TokenizeMsg sent
    "tokenizer_recv",  # tokenizer worker: took the message (with the others waiting beside it)
    "tokenizer_sent",  # tokenizer worker: chat template and encoding done, UserMsg sent
    "scheduler_recv",  # scheduler: the UserMsg read between two steps, the request queued
    "admitted",  # scheduler: a page-table row, and its first prompt chunk in a batch
    "first_token",  # scheduler: its first token on the host (the last prompt chunk has run)
    "scheduler_sent",  # scheduler: the step's DetokenizeMsgs sent
    "detokenizer_recv",  # detokenizer: took the message
    "detokenizer_sent",  # detokenizer: the first text sent as a UserReply
    "api_recv",  # API server: `listen` read the reply
    "sse_write",  # API server: the first content chunk handed to the connection
)

# The stages between two consecutive points, named as the course names the parts.
STAGES = (
    ("http", "received", "api_sent"),  # accept and parse (and wait for the API server's event loop)
    ("to tokenizer", "api_sent", "tokenizer_recv"),
    ("tokenize", "tokenizer_recv", "tokenizer_sent"),
    ("to scheduler", "tokenizer_sent", "scheduler_recv"),
    ("waiting", "scheduler_recv", "admitted"),  # in the queue: the prompts ahead of it run first
    ("prefill", "admitted", "first_token"),  # its prompt chunks and the batch in flight before them
    ("results", "first_token", "scheduler_sent"),
    ("to detokenizer", "scheduler_sent", "detokenizer_recv"),
    ("detokenize", "detokenizer_recv", "detokenizer_sent"),
    ("to api", "detokenizer_sent", "api_recv"),
    ("sse", "api_recv", "sse_write"),
)


def stamp(stamps: Optional[Stamps], point: str, now: Optional[float] = None) -> None:
    """Write `point` (first time only) into `stamps`; nothing when the request carries none."""
    if stamps is not None and point not in stamps:
        stamps[point] = time.monotonic() if now is None else now


def durations(stamps: Stamps) -> dict[str, float]:
    """Seconds spent in each stage whose two points are both stamped."""
    return {name: stamps[b] - stamps[a] for name, a, b in STAGES if a in stamps and b in stamps}
