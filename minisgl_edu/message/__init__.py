"""Messages between the processes, named as the course names them.

    API server --TokenizeMsg/AbortMsg--> tokenizer --UserMsg/AbortBackendMsg--> scheduler
    scheduler --DetokenizeMsg--> detokenizer --UserReply--> API server

Each is a plain dataclass; `codec` turns them into bytes, `ipc` carries them over ZeroMQ sockets
(imported by the processes that need it, not here); `unwrap` opens a batch of them.
"""

from minisgl_edu.message.backend import (
    AbortBackendMsg,
    BaseBackendMsg,
    BatchBackendMsg,
    ExitMsg,
    UserMsg,
)
from minisgl_edu.message.batch import unwrap
from minisgl_edu.message.frontend import BatchFrontendMsg, SchedulerStatsMsg, UserReply
from minisgl_edu.message.tokenizer import (
    AbortMsg,
    BatchTokenizerMsg,
    DetokenizeMsg,
    TokenizeMsg,
)

__all__ = [
    "AbortBackendMsg",
    "AbortMsg",
    "BaseBackendMsg",
    "BatchBackendMsg",
    "BatchFrontendMsg",
    "BatchTokenizerMsg",
    "DetokenizeMsg",
    "ExitMsg",
    "SchedulerStatsMsg",
    "TokenizeMsg",
    "UserMsg",
    "UserReply",
    "unwrap",
]
