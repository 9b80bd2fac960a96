"""Mixed batches (`SchedulerConfig.mixed_chunk`): decode tokens ride along with a prefill chunk.

With the option on, a step that prefills also computes one decode token for every running request,
in the same forward pass. These tests check that the tokens are exactly those of the unmixed engine
(normal and overlap loop, prefix hits, aborts), that decoding goes on while a long prompt is
chunked in (and waits without the option), that every page comes back, that the runtime's views
and the stepper show such a batch, and that the command-line flag reaches the config.

The tests marked `gpu` need CUDA and FlashInfer (skipped without them): on the GPU machine run
`pytest -q tests/test_mixed_batches.py -m gpu`.
"""

from __future__ import annotations

import pytest
import torch

from minisgl_edu.core import ReqStatus, SamplingParams
from minisgl_edu.models.testing import IdTokenizer
from minisgl_edu.scheduler import Scheduler, SchedulerConfig

gpu = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def make(model_dir: str, **kw) -> Scheduler:
    cfg = dict(model=model_dir, device="cpu", dtype="float32", page_size=4, num_pages=512, max_prefill_tokens=16)
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg))


def prompt(n: int, seed: int = 0) -> list[int]:
    return [(seed * 7919 + i * 104729) % 49000 + 100 for i in range(n)]


def greedy(n: int) -> SamplingParams:
    return SamplingParams(max_tokens=n, ignore_eos=True)


def tokens_by_uid(s: Scheduler) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for m in s.io.drain():
        out.setdefault(m.uid, [])
        if m.next_token >= 0:
            out[m.uid].append(m.next_token)
    return out


def assert_all_pages_back(s: Scheduler) -> None:
    s.cache.check()
    assert not s.reqs and s.is_idle and not s.has_in_flight
    assert s.cache.page_table.num_free_rows == s.cache.page_table.max_reqs
    assert s.cache.num_available == s.cache.num_pages  # every page is free or only cached
    assert s.cache.num_deferred == 0 and not s._ahead


# ---------------------------------------------------------------------- one workload, many ways
SHARED = prompt(40, seed=9)  # the prompt of a request that finishes first, so its pages stay cached
LONG, PREFIX_HIT, ABORT_DECODING, ABORT_MID_CHUNK = 2, 3, 4, 5


def drive(s: Scheduler, overlap: bool = False):
    """A long prompt (several chunks of the 16-token budget) arrives while two requests decode,
    with a request whose prompt starts with a cached prefix, one aborted after 3 tokens and one
    aborted part-way through its prompt. Arrivals and aborts follow the requests' state, not the
    step count, so the run with mixing and the run without see the same requests.

    -> (tokens by uid, the StepRecords, the prefix hit of PREFIX_HIT)
    """
    s.add_request(9, SHARED, greedy(2))
    s.run_until_idle(overlap=overlap)  # SHARED's pages go to the prefix cache
    s.add_request(0, prompt(5, 0), greedy(30))
    s.add_request(1, prompt(7, 1), greedy(26))
    records, hit, arrived = [], None, False
    for _ in range(500):
        rec = s.overlap_step() if overlap else s.step()
        if rec is not None:
            records.append(rec)
        r0 = s.reqs.get(0)
        if not arrived and r0 is not None and len(r0.output_ids) >= 2:  # 0 and 1 are decoding now
            arrived = True
            s.add_request(LONG, prompt(70, 2), greedy(12))
            hit = s.add_request(PREFIX_HIT, SHARED + prompt(6, 3), greedy(10))
            s.add_request(ABORT_DECODING, prompt(6, 4), greedy(40))
            s.add_request(ABORT_MID_CHUNK, prompt(40, 5), greedy(8))
        r4 = s.reqs.get(ABORT_DECODING)
        if r4 is not None and len(r4.output_ids) >= 3:
            s.abort(ABORT_DECODING)
        r5 = s.reqs.get(ABORT_MID_CHUNK)
        if r5 is not None and r5.status == ReqStatus.PREFILLING and 0 < r5.cached_len < 40:
            s.abort(ABORT_MID_CHUNK)
        if arrived and s.is_idle and not s.has_in_flight:
            break
    return tokens_by_uid(s), records, hit


@pytest.fixture(scope="module")
def unmixed(tiny_model_dir):
    s = make(tiny_model_dir)
    out, records, hit = drive(s)
    assert_all_pages_back(s)
    assert not any(r.phase == "mixed" for r in records)
    return out, records, hit.prefix_len


def test_mixed_tokens_equal_unmixed(tiny_model_dir, unmixed):
    want, _, want_hit = unmixed
    s = make(tiny_model_dir, mixed_chunk=True)
    got, records, hit = drive(s)
    assert got == want
    assert len(got[ABORT_DECODING]) == 3 and got[ABORT_MID_CHUNK] == []  # aborted where the test said
    assert [len(got[u]) for u in (0, 1, LONG, PREFIX_HIT)] == [30, 26, 12, 10]
    assert hit.prefix_len == want_hit == 40  # 10 whole cached pages of SHARED reused
    mixed = [r for r in records if r.phase == "mixed"]
    assert len(mixed) >= 5, "the long prompt's chunks should have gone in mixed batches"
    for r in mixed:
        assert r.decode_uids and len(r.decode_uids) < len(r.items)  # both kinds of item
        assert sum(n for _, _, n in r.items) <= 16  # decode tokens count against the budget
    assert_all_pages_back(s)


def test_overlap_loop_mixed_tokens_equal_unmixed(tiny_model_dir, unmixed):
    """The overlap loop's mixed batches: decode tokens read on the device, prompt chunks from the host."""
    want, _, _ = unmixed
    s = make(tiny_model_dir, mixed_chunk=True)
    got, records, _ = drive(s, overlap=True)
    assert got == want
    assert sum(r.phase == "mixed" for r in records) >= 5
    assert_all_pages_back(s)


# ---------------------------------------------------------------------- decoding goes on
def _chunked_in_while_decoding(model_dir: str, mixed: bool):
    """uid 0 decodes; an 80-token prompt (uid 1) arrives. -> the records of the steps that
    computed a chunk of uid 1's prompt, and how many tokens uid 0 got in those steps."""
    s = make(model_dir, mixed_chunk=mixed)
    s.add_request(0, prompt(5), greedy(40))
    s.step()
    s.step()
    s.add_request(1, prompt(80, 1), greedy(2))
    chunk_steps, tokens_for_0 = [], 0
    while not s.is_idle:
        rec = s.step()
        if any(u == 1 and u not in rec.decode_uids for u, _, _ in rec.items):
            chunk_steps.append(rec)
            tokens_for_0 += 0 in rec.next_tokens
    assert_all_pages_back(s)
    return chunk_steps, tokens_for_0


def test_decoding_goes_on_while_a_long_prompt_is_chunked_in(tiny_model_dir):
    steps, tokens_for_0 = _chunked_in_while_decoding(tiny_model_dir, mixed=True)
    # The budget of 16 is shared: 1 decode token + 15 prompt tokens per step.
    assert [n for r in steps for u, _, n in r.items if u == 1] == [15, 15, 15, 15, 15, 5]
    assert all(r.phase == "mixed" and r.decode_uids == [0] for r in steps)
    assert tokens_for_0 == len(steps) == 6  # a token in every one of those steps


def test_without_mixing_decoding_waits_for_the_whole_prompt(tiny_model_dir):
    steps, tokens_for_0 = _chunked_in_while_decoding(tiny_model_dir, mixed=False)
    assert [n for r in steps for u, _, n in r.items if u == 1] == [16, 16, 16, 16, 16]
    assert all(r.phase == "prefill" for r in steps)
    assert tokens_for_0 == 0  # uid 0 sat out all 5 steps


def test_no_mixing_when_the_decodes_alone_fill_the_budget(tiny_model_dir):
    """4 requests decode and the budget is 4 tokens: the prompt goes alone, as without the option,
    instead of waiting until someone finishes."""
    s = make(tiny_model_dir, mixed_chunk=True, max_prefill_tokens=4)
    for uid in range(4):
        s.add_request(uid, prompt(3, uid), greedy(20))
    while s.waiting:  # their prompts, then mixed batches of the ones left and the decodes
        s.step()
    assert len(s.running) == 4
    s.add_request(9, prompt(3, 9), greedy(2))
    rec = s.step()
    assert rec.phase == "prefill" and [u for u, _, _ in rec.items] == [9]
    s.run_until_idle()
    assert_all_pages_back(s)


# ---------------------------------------------------------------------- what the course shows
def test_snapshot_and_stepper_show_a_mixed_batch(tiny_model_dir):
    import matplotlib

    matplotlib.use("Agg")
    from minisgl_edu.runtime import LocalServer
    from minisgl_edu.widgets import SchedulerStepper
    from minisgl_edu.widgets.stepper import plot_schedule

    srv = LocalServer(tiny_model_dir, device="cpu", page_size=4, num_pages=64, max_prefill_tokens=16, mixed_chunk=True)
    try:
        st = SchedulerStepper(srv, [prompt(5)], greedy(6))
        short_uid = st.model.uids[0]
        st.step_button.click()  # its prompt; its first decode step is planned next
        long_uid = srv.submit(prompt(30, 1), greedy(2))
        st.step_button.click()  # that decode step; then the long prompt arrives and a mixed batch is planned
        nb = st.model.snapshot.next_batch
        assert nb.phase == "mixed" and nb.num_tokens == 16
        assert [(it.uid, it.start, it.num_tokens, it.is_decode) for it in nb.items] == [
            (long_uid, 0, 15, False),
            (short_uid, 6, 1, True),
        ]
        st.refresh()
        html = st.view.value
        assert "next batch #3 (mixed, 16 tokens)" in html
        assert "prompt tokens 0..14" in html and "position 6" in html
        st.step_button.click()
        ran = srv.snapshot().batch  # made from the StepRecord, not from the Batch
        assert ran.phase == "mixed"
        assert [(it.uid, it.is_decode) for it in ran.items] == [(long_uid, False), (short_uid, True)]
        assert set(ran.next_tokens) == {short_uid}  # the chunk samples nothing yet, the decode token does
        fig = plot_schedule(st.model.history)
        # The mixed column (step 3) has a dark prefill cell and a light decode cell.
        alphas = sorted(p.get_alpha() for p in fig.axes[0].patches if abs(p.get_x() + 0.45 - 3) < 1e-9)
        assert alphas == [0.35, 1.0]
        st.run_button.click()
        assert st.model.done
    finally:
        srv.stop()


def test_trace_names_each_requests_phase_in_a_mixed_batch(tiny_model_dir):
    from minisgl_edu.trace import Tracer

    s = make(tiny_model_dir, mixed_chunk=True)
    s.tracer = Tracer()
    s.add_request(0, prompt(5), greedy(4))
    s.step()
    s.add_request(1, prompt(20, 1), greedy(1))
    s.step()
    mixed = [e for e in s.tracer.events() if e.event == "scheduled" and e.data.get("mixed")]
    assert {(e.uid, e.data["phase"]) for e in mixed} == {(0, "decode"), (1, "prefill")}


def test_flag_reaches_the_config():
    from minisgl_edu.server.args import parse_args

    assert SchedulerConfig().mixed_chunk is False  # off unless asked for
    assert "mixed_chunk" not in parse_args([]).scheduler_overrides()
    overrides = parse_args(["--enable-mixed-chunk", "--device", "cpu"]).scheduler_overrides()
    assert overrides["mixed_chunk"] is True and overrides["device"] == "cpu"
    assert SchedulerConfig(**overrides).mixed_chunk is True


# ---------------------------------------------------------------------- the real model
@pytest.mark.slow
def test_default_model_mixed_tokens_equal_unmixed(default_model_dir):
    outs = []
    for mixed in (False, True):
        s = make(default_model_dir, mixed_chunk=mixed, page_size=16, num_pages=64)
        s.add_request(0, s.tokenizer.encode("The three primary colours are"), greedy(8))
        s.step()
        story = "Write a short story about a lighthouse keeper who finds a message in a bottle on the shore."
        s.add_request(1, s.tokenizer.encode(story), greedy(4))  # two chunks of the 16-token budget, or more
        records = s.run_until_idle()
        assert any(r.phase == "mixed" for r in records) == mixed
        assert_all_pages_back(s)
        outs.append(tokens_by_uid(s))
    assert outs[0] == outs[1] and [len(outs[1][u]) for u in (0, 1)] == [8, 4]


# ---------------------------------------------------------------------- the torch backend's two plans
def _paged_batch(q_lens: list[int], kv_lens: list[int], page_size: int, hq: int = 6, hkv: int = 2, d: int = 16):
    """One layer of paged K/V on the CPU: what earlier batches wrote for each request (its pages
    out of order), and the q, k, v of this batch's new tokens. -> (pool, table, meta, q, k, v)"""
    from minisgl_edu.attention.base import AttentionMetadata
    from minisgl_edu.kvcache.allocator import PageAllocator
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    torch.manual_seed(0)
    num_pages = sum(-(-k // page_size) for k in kv_lens) + 4
    pool = KVPool(1, num_pages, page_size, hkv, d, torch.float32, "cpu")
    table = PageTable(8, -(-max(kv_lens) // page_size) + 1, "cpu", fill=pool.dummy_page)
    alloc = PageAllocator(num_pages)
    rows, out_loc = [], []
    for q, k in zip(q_lens, kv_lens):
        row = table.alloc_row()
        table.append(row, alloc.allocate(-(-k // page_size))[::-1])
        rows.append(row)
        slots = table.slots(row, 0, k, page_size)
        if k > q:
            old = torch.tensor(slots[: k - q])
            pool.store(0, old, torch.randn(len(old), hkv, d), torch.randn(len(old), hkv, d))
        out_loc += slots[k - q :]
    t = sum(q_lens)
    meta = AttentionMetadata(
        is_prefill=True,
        q_lens=q_lens,
        kv_lens=kv_lens,
        rows=torch.tensor(rows),
        out_loc=torch.tensor(out_loc),
        row_ids=rows,
    )
    return pool, table, meta, torch.randn(t, hq, d), torch.randn(t, hkv, d), torch.randn(t, hkv, d)


def _attention_per_request(pool, table, meta, q: torch.Tensor) -> torch.Tensor:
    """Plain attention, one request at a time, over its K/V in the pool (new tokens included):
    query i of a request with q_len new tokens sees keys 0..kv_len - q_len + i."""
    group = q.shape[1] // pool.num_kv_heads  # adjacent query heads share a KV head
    outs, start = [], 0
    for row, q_len, kv_len in zip(meta.row_ids, meta.q_lens, meta.kv_lens):
        slots = torch.tensor(table.slots(row, 0, kv_len, pool.page_size))
        keys = pool.k[0][slots].repeat_interleave(group, dim=1)  # [kv_len, Hq, D]
        values = pool.v[0][slots].repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[start : start + q_len], keys) / q.shape[2] ** 0.5
        sees = torch.arange(kv_len)[None, :] <= torch.arange(kv_len - q_len, kv_len)[:, None]
        scores = scores.masked_fill(~sees, float("-inf"))
        outs.append(torch.einsum("hqk,khd->qhd", scores.softmax(-1), values))
        start += q_len
    return torch.cat(outs)


@pytest.mark.parametrize("page_size", [1, 4])
@pytest.mark.parametrize(
    "q_lens,kv_lens,plans",
    [
        # A mixed batch: a chunk after a cached prefix, a first chunk, decode rows at assorted
        # context lengths. The chunks in one padded call, the decode rows in the decode path.
        ([27, 40, 1, 1, 1], [91, 40, 1, 18, 230], [(0, 67, False), (67, 70, True)]),
        # A one-token chunk among the chunks is padded with them.
        ([27, 1, 40, 1, 1], [91, 6, 40, 18, 230], [(0, 68, False), (68, 70, True)]),
        # Decode rows first is not a mixed batch's layout: one padded call.
        ([1, 1, 27], [18, 230, 91], [(0, 29, False)]),
        ([27, 40], [91, 40], [(0, 67, False)]),  # a prefill batch
        ([1, 1, 1], [1, 18, 230], [(0, 3, True)]),  # a decode batch
    ],
)
def test_torch_backend_plans_a_mixed_batch_as_chunks_then_decode_rows(q_lens, kv_lens, plans, page_size):
    from minisgl_edu.attention.torch_backend import TorchBackend

    pool, table, meta, q, k, v = _paged_batch(q_lens, kv_lens, page_size)
    backend = TorchBackend(pool, table)
    backend.prepare(meta)
    assert [(p.tokens.start, p.tokens.stop, p.decode) for p in backend._plans] == plans
    got = backend.forward(0, q, k, v)  # stores k, v at out_loc first
    want = _attention_per_request(pool, table, meta, q)
    assert got.shape == want.shape == q.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------- GPU: FlashInfer
def _two_decode_while_a_prompt_is_chunked(model_dir: str, device: str, backend: str, mixed: bool, overlap: bool):
    """Two requests decode while a 150-token prompt is chunked in. Mixed: a budget of 32 shared
    with the 2 decode tokens; unmixed: a budget of 30. So the prompt's chunks are the same 30
    tokens either way, and what differs is only where the decode rows run: beside the chunk in
    the prefill kernel, or in decode batches of their own."""
    s = Scheduler(
        SchedulerConfig(
            model=model_dir,
            device=device,
            attention_backend=backend,
            page_size=16,
            num_pages=256,
            cache="naive",
            max_prefill_tokens=32 if mixed else 30,
            mixed_chunk=mixed,
            cuda_graph_max_bs=8,
        ),
        tokenizer=IdTokenizer(),
    )
    s.add_request(0, [(7 * i) % 500 + 3 for i in range(9)], greedy(24))
    s.add_request(1, [(11 * i) % 500 + 3 for i in range(14)], greedy(24))
    s.step()
    s.step()  # both are decoding now
    s.add_request(2, [(13 * i) % 500 + 3 for i in range(150)], greedy(8))
    records = s.run_until_idle(overlap=overlap)
    chunks = [n for r in records for u, _, n in r.items if u == 2 and u not in r.decode_uids]
    assert chunks == [30] * 5, chunks
    assert any(r.phase == "mixed" for r in records) == mixed
    assert_all_pages_back(s)
    return tokens_by_uid(s)


@pytest.mark.parametrize(
    "device,backend",
    [
        ("cpu", "torch"),
        pytest.param("cuda", "flashinfer", marks=[gpu, needs_cuda]),
        pytest.param("cuda", "flashinfer,triton", marks=[gpu, needs_cuda]),  # the CUDA default
    ],
)
@pytest.mark.parametrize("overlap", [False, True])
def test_mixed_greedy_equals_unmixed_per_backend(tiny_qwen3_dir, device, backend, overlap):
    """On CUDA: a mixed batch's prompt chunk and decode rows go through FlashInfer's prefill
    wrapper with per-request q lengths (decode rows of one token); unmixed, the decode rows run in
    decode batches (FlashInfer's or our Triton decode kernel, CUDA graphs). Same greedy tokens."""
    want = _two_decode_while_a_prompt_is_chunked(tiny_qwen3_dir, device, backend, mixed=False, overlap=overlap)
    got = _two_decode_while_a_prompt_is_chunked(tiny_qwen3_dir, device, backend, mixed=True, overlap=overlap)
    assert [len(got[u]) for u in (0, 1, 2)] == [24, 24, 8]
    assert got == want


@gpu
@needs_cuda
@pytest.mark.parametrize("page_size", [1, 16])
def test_gpu_flashinfer_mixed_layout_matches_torch(page_size):
    """One attention call over a mixed batch's layout (a chunk after a cached prefix, a first chunk,
    decode rows of one token at assorted context lengths): FlashInfer against the torch backend."""
    from minisgl_edu.attention.base import AttentionMetadata
    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend
    from minisgl_edu.attention.torch_backend import TorchBackend
    from minisgl_edu.kvcache.allocator import PageAllocator
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    hq, hkv, d, dev, dt = 16, 8, 128, "cuda", torch.bfloat16
    q_lens, kv_lens = [27, 40, 1, 1, 1], [91, 40, 1, 18, 230]
    torch.manual_seed(0)
    num_pages = sum(-(-k // page_size) for k in kv_lens) + 4
    pool = KVPool(1, num_pages, page_size, hkv, d, dt, dev)
    table = PageTable(8, -(-max(kv_lens) // page_size) + 1, dev, fill=pool.dummy_page)
    alloc = PageAllocator(num_pages)
    rows, out_loc = [], []
    for q, k in zip(q_lens, kv_lens):
        row = table.alloc_row()
        table.append(row, alloc.allocate(-(-k // page_size))[::-1])  # pages out of order
        rows.append(row)
        slots = table.slots(row, 0, k, page_size)
        old = torch.tensor(slots[: k - q], dtype=torch.int64, device=dev)
        if len(old):  # K/V computed by earlier batches
            pool.store(0, old, *(torch.randn(len(old), hkv, d, device=dev, dtype=dt) for _ in "kv"))
        out_loc += slots[k - q :]
    t = sum(q_lens)
    q, k, v = (torch.randn(t, h, d, device=dev, dtype=dt) for h in (hq, hkv, hkv))
    meta = AttentionMetadata(
        is_prefill=True,
        q_lens=q_lens,
        kv_lens=kv_lens,
        rows=torch.tensor(rows, dtype=torch.int64, device=dev),
        out_loc=torch.tensor(out_loc, dtype=torch.int64, device=dev),
    )
    assert not meta.is_decode  # one longer row: the prefill kernel
    ref = TorchBackend(pool, table)
    ref.prepare(meta)
    want = ref.forward(0, q, k, v)
    fi = FlashInferBackend(pool, table, num_qo_heads=hq)
    fi.prepare(meta)
    assert fi._wrapper is fi.prefill_wrapper
    got = fi.forward(0, q, k, v)
    torch.cuda.synchronize()
    rel = ((got.float() - want.float()).norm() / want.float().norm()).item()
    assert got.shape == want.shape and rel < 1e-2
