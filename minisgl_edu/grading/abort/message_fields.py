"""The fields of the abort message after its first four, shared by exercise 2 and its stretch.

Where this sits: checks.py's `check_message` (the hand-written cases) checks uid, finished and
finish_reason, next_token (message_token.py), then calls `check_fields`. The contract gives the whole message,
`DetokenizeMsg(uid, -1, True, 'abort', stop)`: the stop strings (message_stop.py) and every other
field left at its default. Each of those fields means something to the detokenizer and the API
server, so a value put there is not decoration: `error` turns the end into a rejection, and
`cached_tokens` rewrites the usage the client is billed with. A failed check names the field.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from minisgl_edu.grading.abort.message_stop import check_stop
from minisgl_edu.grading.core import Mistake
from minisgl_edu.message import DetokenizeMsg

# the fields the abort message sets itself; every other one keeps its default
SET_BY_THE_ABORT = ("uid", "next_token", "finished", "finish_reason", "stop")

ERROR_HINT = (
    "leave the abort message's error field out: error means the scheduler rejected the request (nothing was "
    "generated), and the client gets an error instead of its text. An abort is an ordinary end: "
    "finish_reason 'abort' and no error"
)
CACHED_TOKENS_HINT = (
    "leave the abort message's cached_tokens out: cached_tokens is the prefix hit reported in the usage (the "
    "prompt tokens the request found in the cache when it was admitted), not the tokens cached now; the "
    "detokenizer keeps the largest value it saw, so a bigger one rewrites the usage"
)


def _default(f: dataclasses.Field) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def check_fields(last, stop: Optional[list[str]]) -> None:
    """`last`: the request's finished message; `stop`: the stop strings it must carry (None: the case's
    request has none). Every field the contract does not set must keep its default."""
    check_stop(last, stop)
    for f in dataclasses.fields(DetokenizeMsg):
        if f.name in SET_BY_THE_ABORT:
            continue
        got, want = getattr(last, f.name, _default(f)), _default(f)
        if got == want:
            continue
        hint = {"error": ERROR_HINT, "cached_tokens": CACHED_TOKENS_HINT}.get(
            f.name, f"leave the abort message's {f.name} field out: the contract's message sets only the first five"
        )
        raise Mistake(
            f"the abort message carries {f.name}={got!r}, expected {want!r}: the message is exactly "
            "DetokenizeMsg(uid, -1, True, 'abort', list(req.sampling_params.stop)), every other field at its default",
            hint,
        )
