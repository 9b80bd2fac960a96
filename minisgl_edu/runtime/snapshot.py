"""What the runtime looks like between two steps, as plain data for notebooks and widgets.

Where this sits on the request path: beside it. `LocalServer.step()` and `.snapshot()` return a
`Snapshot`: the batch that ran (or is about to), the waiting queue and the running set of the
scheduler, every request with its text so far, the messages sitting in each in-memory queue, and
the owner of every KV page. Widgets only ever draw one of these, so they can be tested without a
browser and the engine never depends on a widget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from minisgl_edu.core import Batch
from minisgl_edu.kvcache import PageMapSnapshot


@dataclass
class BatchItemView:
    uid: int
    start: int  # position of the first token computed this step
    num_tokens: int  # tokens computed this step: a prompt chunk, or 1 for decode (1 + drafts to verify)
    is_decode: bool = False  # a decode token (True) or a prompt chunk (False)
    # (speculative decoding) The drafts this request carries; once the batch ran, the drafts the
    # model accepted, the tokens the request got this step (the client's; a finish inside the
    # accepted run cuts them short) and the pages given back (those of rejected drafts).
    draft: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    freed_pages: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.num_tokens


@dataclass
class BatchView:
    """A batch as the widgets draw it: one that ran (made from the scheduler's `StepRecord`) or one
    that is chosen and about to run (made from the `Batch` itself, `LocalServer.plan`), with named
    items. The scheduler never sees it; `StepRecord` is the scheduler's own account of a step."""

    batch_id: int
    # "prefill" | "decode" | "mixed" (prompt chunks and decode tokens together) | "verify" (a
    # decode batch in which some requests also carry drafts)
    phase: str
    items: list[BatchItemView]
    next_tokens: dict[int, int] = field(default_factory=dict)  # uid -> sampled token (after it ran)
    finished: dict[int, str] = field(default_factory=dict)  # uid -> finish_reason (after it ran)
    token_text: dict[int, str] = field(default_factory=dict)  # token id -> its text, for the drafts and tokens

    @property
    def uids(self) -> list[int]:
        return [it.uid for it in self.items]

    @property
    def num_tokens(self) -> int:
        return sum(it.num_tokens for it in self.items)

    @property
    def has_drafts(self) -> bool:
        return any(it.draft for it in self.items)

    @classmethod
    def planned(cls, batch: Batch) -> BatchView:
        """A batch chosen by `Scheduler.schedule()` that has not run yet."""
        return cls(
            batch.batch_id,
            batch.phase,
            [BatchItemView(it.req.uid, it.start, it.num_tokens, it.is_decode, list(it.draft)) for it in batch.items],
        )


@dataclass
class RequestView:
    uid: int
    # "tokenizing" (not at the scheduler yet) | "waiting" | "prefilling" | "decoding" | "finished"
    status: str
    prompt_tokens: int  # 0 until the tokenizer has run
    cached_tokens: int  # tokens whose K/V are in the cache
    output_tokens: int
    text: str  # what the client has received so far
    finish_reason: Optional[str] = None
    pages: list[int] = field(default_factory=list)  # its page-table row


@dataclass
class Snapshot:
    steps: int  # scheduler iterations run so far
    batch: Optional[BatchView]  # what the last step ran (None: it had nothing to do)
    next_batch: Optional[BatchView]  # chosen and about to run (see LocalServer.plan), else None
    waiting: list[int]  # uids in the scheduler's waiting queue, head first
    running: list[int]  # uids decoding
    requests: dict[int, RequestView]
    queues: dict[str, int]  # messages in flight in each in-memory queue
    pages: PageMapSnapshot
    free_pages: int  # free list plus cached pages nobody uses

    @property
    def idle(self) -> bool:
        return not self.waiting and not self.running and self.next_batch is None and not any(self.queues.values())
