"""A batch's inputs, built once: the flat lists every forward pass reads.

Where this sits on the request path: the first of `Engine.forward_batch`'s three steps (inputs,
run the model, sample). A `Batch` is a list of requests, each contributing a run of tokens
(`ScheduledReq`: a prompt chunk, one decode token, or a decode token and its drafts). The model
wants one flat sequence of tokens instead, so here every item is laid end to end:

    item:        req A (prompt chunk of 3)   req B (decode)   req C (decode + 2 drafts)
    ids:         a0 a1 a2                    b7               c4 d1 d2
    positions:   0  1  2                     7                4  5  6
    out_loc:     the KV-pool slot where each token's K/V is written (from the page table)
    sample_at:   2                           3                4  5  6   (rows whose logits are needed)

Only the positions in `sample_at` get logits: a prompt chunk that leaves part of its prompt for a
later step gets none, a completed prompt or a decode token its last position, and a request with
drafts every position, since each draft is checked against the logits before it.

Where the input tokens come from: a prompt chunk's from the host (`req.all_ids`); a decode token
is the one its request sampled last, read on the device from `Engine.last_tokens`, where the
sampler wrote it (`from_device` lists those places; `ids` holds a 0 there). That is one rule for
both of the scheduler's loops: under overlap scheduling the host has not even seen that token yet
when the next batch is built. A decode token with drafts (speculative decoding) comes from the
host with its drafts: such a batch is only built once the newest tokens are known there.
"""

from __future__ import annotations

from dataclasses import dataclass

from minisgl_edu.core import Batch
from minisgl_edu.kvcache import PageTable


@dataclass
class ForwardInputs:
    ids: list[int]  # the input token at each flat position (0 where it is read from the device)
    positions: list[int]  # its position in its request's sequence
    out_loc: list[int]  # the KV-pool slot its K/V is written to
    token_rows: list[int]  # the page-table row of the request it belongs to
    from_device: list[int]  # flat positions whose token is read from `Engine.last_tokens`
    sample_at: list[int]  # flat positions whose logits are needed, in order
    rows: list[int]  # per item: its request's page-table row
    q_lens: list[int]  # per item: tokens computed
    kv_lens: list[int]  # per item: tokens in its cache after this pass
    sampled: list[bool]  # per item: does it get a token (or verify drafts) from this pass?
    is_decode: bool  # one decode token per item (what a decode CUDA graph replays)

    @classmethod
    def of(cls, batch: Batch, page_table: PageTable, page_size: int) -> ForwardInputs:
        inputs = cls([], [], [], [], [], [], [], [], [], [], batch.is_decode)
        for it in batch.items:
            req, first = it.req, len(inputs.positions)
            if it.is_decode and not it.draft:  # the token its request sampled last
                inputs.from_device.append(first)
                inputs.ids.append(0)
            else:
                inputs.ids.extend(it.input_ids)
            inputs.positions.extend(range(it.start, it.end))
            inputs.out_loc.extend(page_table.slots(req.table_idx, it.start, it.end, page_size))
            inputs.token_rows.extend([req.table_idx] * it.num_tokens)
            if it.draft:
                inputs.sample_at.extend(range(first, first + it.num_tokens))
            elif it.completes_prompt:
                inputs.sample_at.append(first + it.num_tokens - 1)
            inputs.rows.append(req.table_idx)
            inputs.q_lens.append(it.num_tokens)
            inputs.kv_lens.append(it.end)
            inputs.sampled.append(it.completes_prompt)
        return inputs

    @property
    def num_tokens(self) -> int:
        return len(self.positions)

    @property
    def all_from_device(self) -> bool:
        """Is every input token in `Engine.last_tokens` (a decode batch)?"""
        return len(self.from_device) == self.num_tokens

    @property
    def sampled_rows(self) -> list[int]:
        """The page-table rows of the items that get a token, in order."""
        return [row for row, s in zip(self.rows, self.sampled) if s]
