"""How the scheduler talks to the rest of the system: the `SchedulerIO` interface.

Where this sits on the request path: between the tokenizer (which sends `UserMsg` and
`AbortBackendMsg`) and the detokenizer (which receives `DetokenizeMsg`). The scheduler only knows
these three calls; what is behind them depends on how it runs:

| implementation | module | used by |
|---|---|---|
| `QueueIO` | `memory.py` | the in-process runtime, the offline `LLM`, tests, the graders |
| `ZmqSchedulerIO` | `zmq_io.py` | the server's `minisgl-TP0-scheduler` process (ZeroMQ sockets) |
| `TPLeaderIO` / `TPFollowerIO` | `tp_io.py` | tensor parallelism: rank 0 passes its messages to the others |

The scheduling logic is the same whichever is plugged in.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.message import BaseBackendMsg, DetokenizeMsg


class SchedulerIO:
    def recv(self, block: bool) -> list[BaseBackendMsg]:
        """Messages that arrived since the last call. `block=True` when the scheduler is idle:
        wait for something (an implementation may return [] after a timeout)."""
        raise NotImplementedError

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        raise NotImplementedError

    # True where someone reads the stats (the server's /metrics and /dashboard): only then does
    # the scheduler spend time building them. In one process (notebooks, benchmarks) nobody does.
    wants_stats: bool = False

    def send_stats(self, stats: Any) -> None:
        """The latest `SchedulerStats`; the server turns them into /metrics and /dashboard."""
