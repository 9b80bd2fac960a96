"""What one scheduler step did: the `StepRecord` that `step()` and `overlap_step()` return.

Where this sits on the request path: beside it. The scheduler fills one record per batch it runs
(what it scheduled, then the tokens and finishes it got); the in-process runtime turns it into a
`BatchView` for the course's widgets, and the benchmarks count its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minisgl_edu.core import Batch


@dataclass
class StepRecord:
    """The scheduler's own account of a batch it ran, returned to its caller."""

    batch_id: int
    phase: str  # "prefill" | "decode" | "mixed" | "verify"
    items: list[tuple[int, int, int]]  # (uid, start position, tokens computed)
    next_tokens: dict[int, int] = field(default_factory=dict)  # uid -> sampled token
    finished: dict[int, str] = field(default_factory=dict)  # uid -> finish_reason
    seconds: float = 0.0
    decode_uids: list[int] = field(default_factory=list)  # items that computed a decode token, not a prompt chunk
    # (speculative decoding) uid -> its drafts this step, the ones accepted, the pages given back
    drafts: dict[int, list[int]] = field(default_factory=dict)
    accepted: dict[int, list[int]] = field(default_factory=dict)
    freed_pages: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, batch: Batch) -> StepRecord:
        """The record of `batch` as scheduled (tokens and finishes are filled in when it has run)."""
        return cls(
            batch.batch_id,
            batch.phase,
            [(it.req.uid, it.start, it.num_tokens) for it in batch.items],
            decode_uids=[it.req.uid for it in batch.items if it.is_decode],
            drafts={it.req.uid: list(it.draft) for it in batch.items if it.draft},
        )
