"""Several messages in one send: the batch types, and `unwrap`, which every receiver uses.

Under load a worker sends what it has in one `Batch*Msg` instead of one send per message, to save
round trips. A receiver calls `unwrap(msg)` and handles the plain messages it gets, in order.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.message.backend import BatchBackendMsg
from minisgl_edu.message.frontend import BatchFrontendMsg
from minisgl_edu.message.tokenizer import BatchTokenizerMsg

BATCH_TYPES = (BatchBackendMsg, BatchFrontendMsg, BatchTokenizerMsg)


def unwrap(msg: Any) -> list[Any]:
    """The plain messages inside `msg` (batches may nest), or `[msg]` when it is one already."""
    if isinstance(msg, BATCH_TYPES):
        return [m for x in msg.data for m in unwrap(x)]
    return [msg]
