"""Messages the scheduler receives (from a tokenizer worker)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from minisgl_edu.core import SamplingParams


@dataclass
class BaseBackendMsg:
    pass


@dataclass
class UserMsg(BaseBackendMsg):
    """A tokenized request: from here on the engine sees only token ids."""

    uid: int
    input_ids: list[int]
    sampling_params: SamplingParams
    # (n > 1) the uid of the first of the n answers: this one is admitted after that one's prefill
    # and reuses its prompt pages through the prefix cache
    prompt_leader: Optional[int] = None
    stamps: Optional[dict[str, float]] = None  # the path to the first token so far (message/stamps.py)


@dataclass
class AbortBackendMsg(BaseBackendMsg):
    """Stop working on `uid` and give back everything it holds."""

    uid: int


@dataclass
class BatchBackendMsg(BaseBackendMsg):
    """Several backend messages in one send, to save round trips under load."""

    data: list[BaseBackendMsg] = field(default_factory=list)


@dataclass
class ExitMsg(BaseBackendMsg):
    """Asks a worker loop to return (clean shutdown)."""
