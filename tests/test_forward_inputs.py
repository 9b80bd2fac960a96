"""`ForwardInputs`: the first of the engine's three steps lays a batch out flat, once.

Checked on hand-made batches (no model): a prompt chunk that leaves part of its prompt, a prompt
that completes, a decode token and a decode token with drafts, with their input tokens from the
host or, under overlap scheduling, from the device.
"""

from __future__ import annotations

from minisgl_edu.core import Batch, Req, SamplingParams, ScheduledReq
from minisgl_edu.engine.forward_inputs import ForwardInputs
from minisgl_edu.kvcache import PageTable

PAGE = 4


def _req(uid: int, prompt: list[int], output: list[int], row: int, table: PageTable, pages: list[int]) -> Req:
    req = Req(uid=uid, input_ids=prompt, sampling_params=SamplingParams(), output_ids=output, table_idx=row)
    table.append(row, pages)
    return req


def _table() -> PageTable:
    table = PageTable(max_reqs=4, max_pages_per_req=4, device="cpu", fill=0)
    for _ in range(4):
        table.alloc_row()
    return table


def test_a_mixed_batch_is_laid_out_item_by_item_with_logits_where_a_token_is_sampled():
    table = _table()
    chunk = _req(1, [11, 12, 13, 14, 15, 16], [], 0, table, [5, 6])  # 6-token prompt, 4 computed now
    whole = _req(2, [21, 22], [], 1, table, [7])
    decode = _req(3, [31, 32, 33], [34], 2, table, [8])  # newest token 34 at position 3
    spec = _req(4, [41, 42], [43], 3, table, [9, 10])  # newest 43 at position 2, then 2 drafts
    batch = Batch(
        "mixed",
        [
            ScheduledReq(chunk, 0, 4),
            ScheduledReq(whole, 0, 2),
            ScheduledReq(decode, 3, 1),
            ScheduledReq(spec, 2, 3, draft=[44, 45]),
        ],
    )
    inputs = ForwardInputs.of(batch, table, PAGE)
    # a 0 where the decode token is read from Engine.last_tokens (below)
    assert inputs.ids == [11, 12, 13, 14, 21, 22, 0, 43, 44, 45]
    assert inputs.positions == [0, 1, 2, 3, 0, 1, 3, 2, 3, 4]
    # slot = page * PAGE + position % PAGE, on each request's own pages
    assert inputs.out_loc == [20, 21, 22, 23, 28, 29, 35, 38, 39, 40]
    assert inputs.token_rows == [0, 0, 0, 0, 1, 1, 2, 3, 3, 3]
    # no logits for the unfinished chunk; the last position of a completed prompt and of a decode
    # token; every position of an item with drafts
    assert inputs.sample_at == [5, 6, 7, 8, 9]
    assert inputs.sampled == [False, True, True, True]
    assert inputs.sampled_rows == [1, 2, 3]
    assert (inputs.q_lens, inputs.kv_lens, inputs.rows) == ([4, 2, 1, 3], [4, 2, 4, 5], [0, 1, 2, 3])
    assert inputs.from_device == [6] and not inputs.all_from_device and not inputs.is_decode


def test_a_decode_token_is_read_on_the_device_and_a_token_with_drafts_from_the_host():
    table = _table()
    prompt = _req(1, [11, 12, 13], [], 0, table, [5])
    decode = _req(2, [21, 22], [23], 1, table, [6])
    spec = _req(3, [31], [32], 2, table, [7])
    mixed = Batch("mixed", [ScheduledReq(prompt, 0, 3), ScheduledReq(decode, 2, 1), ScheduledReq(spec, 1, 2, [33])])
    inputs = ForwardInputs.of(mixed, table, PAGE)
    # a 0 stands where the token is copied from Engine.last_tokens (the one its request sampled
    # last); the prompt, and a newest token with its drafts, come from the host
    assert inputs.ids == [11, 12, 13, 0, 32, 33]
    assert inputs.from_device == [3]
    assert not inputs.all_from_device

    decode_only = Batch("decode", [ScheduledReq(decode, 2, 1), ScheduledReq(spec, 1, 1)])
    inputs = ForwardInputs.of(decode_only, table, PAGE)
    assert inputs.all_from_device and inputs.is_decode and inputs.from_device == [0, 1] and inputs.ids == [0, 0]
