"""GPU path: FlashInfer attention against the torch reference, the fused CUDA layers and our Triton
kernels inside the model, CUDA graphs, overlap scheduling.

Tests marked `gpu` need CUDA (and FlashInfer) and are skipped without it; run them on the GPU
machine with `pytest -q tests/test_gpu.py`. The overlap-scheduling tests also run on CPU (the
loop's bookkeeping does not depend on the device), so they guard the logic on every machine.
Each of our Triton kernels alone against its reference is in tests/test_gpu_kernels.py, sampling
and the logits chain on CUDA in tests/test_gpu_sampling.py.

The tiny test model has Qwen3-0.6B's attention shape (16 query heads, 8 KV heads, head_dim 128),
so on a fresh GPU machine FlashInfer JIT-compiles the same kernels the benchmark uses.
"""

from __future__ import annotations

import random

import pytest
import torch
from gpu_support import (
    HKV,
    HQ,
    D,
    assert_all_pages_back,
    generate,
    gpu,
    make_scheduler,
    needs_cuda,
    paged_logits,
    prompts,
    rel_err,
)

from minisgl_edu.core import SamplingParams

DEVICES = ["cpu", pytest.param("cuda", marks=[gpu, needs_cuda])]


# ---------------------------------------------------------------------- FlashInfer vs torch
def _attention_case(page_size: int, q_lens: list[int], kv_lens: list[int], seed: int = 0):
    """Both backends on one pool: random cached K/V, random new q/k/v; -> (torch out, flashinfer out)."""
    from minisgl_edu.attention.base import AttentionMetadata
    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend
    from minisgl_edu.attention.torch_backend import TorchBackend
    from minisgl_edu.kvcache.allocator import PageAllocator
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    torch.manual_seed(seed)
    dev, dt = "cuda", torch.bfloat16
    max_len = max(kv_lens)
    num_pages = sum(-(-k // page_size) for k in kv_lens) + 8
    pool = KVPool(1, num_pages, page_size, HKV, D, dt, dev)
    table = PageTable(8, -(-max_len // page_size) + 1, dev, fill=pool.dummy_page)
    alloc = PageAllocator(num_pages)
    rows, out_loc = [], []
    for q, k in zip(q_lens, kv_lens):
        row = table.alloc_row()
        # Shuffled pages, so a wrong page order would show.
        pages = alloc.allocate(-(-k // page_size))
        random.Random(row).shuffle(pages)
        table.append(row, pages)
        rows.append(row)
        slots = table.slots(row, 0, k, page_size)
        cached = torch.tensor(slots[: k - q], dtype=torch.int64, device=dev)
        if len(cached):  # the prefix: K/V computed by an earlier batch
            pool.store(
                0,
                cached,
                torch.randn(len(cached), HKV, D, device=dev, dtype=dt),
                torch.randn(len(cached), HKV, D, device=dev, dtype=dt),
            )
        out_loc += slots[k - q :]
    T = sum(q_lens)
    q = torch.randn(T, HQ, D, device=dev, dtype=dt)
    k = torch.randn(T, HKV, D, device=dev, dtype=dt)
    v = torch.randn(T, HKV, D, device=dev, dtype=dt)
    meta = AttentionMetadata(
        is_prefill=any(x > 1 for x in q_lens),
        q_lens=q_lens,
        kv_lens=kv_lens,
        rows=torch.tensor(rows, dtype=torch.int64, device=dev),
        out_loc=torch.tensor(out_loc, dtype=torch.int64, device=dev),
    )
    ref = TorchBackend(pool, table)
    ref.prepare(meta)
    want = ref.forward(0, q, k, v)
    fi = FlashInferBackend(pool, table, num_qo_heads=HQ)
    fi.prepare(meta)
    got = fi.forward(0, q, k, v)
    torch.cuda.synchronize()
    return want, got


CASES = {
    "prefill": ([37, 1, 130], [37, 1, 130]),
    "prefill_with_cached_prefix": ([10, 33, 1], [50, 70, 17]),
    "chunked_prefill_second_chunk": ([40, 64], [100, 64]),
    "decode": ([1, 1, 1, 1, 1], [1, 17, 200, 33, 64]),
}


@gpu
@needs_cuda
def test_page_table_host_copy_follows_the_table():
    """The FlashInfer backend builds page lists from `host_table`: it must equal the GPU table."""
    from minisgl_edu.kvcache.page_table import PageTable

    table = PageTable(4, 6, "cuda", fill=99)
    rows = [table.alloc_row() for _ in range(3)]
    table.append(rows[0], [3, 1, 4])
    table.append(rows[1], [1, 5])
    table.append(rows[0], [9])
    table.free_row(rows[1])
    table.append(rows[2], [2, 6, 5, 3, 5, 8])
    assert table.host_table.device.type == "cpu" and table.host_table is not table.table
    assert torch.equal(table.table.cpu(), table.host_table)
    table.reset()
    assert torch.equal(table.table.cpu(), table.host_table) and int(table.host_table.min()) == 99


@gpu
@needs_cuda
@pytest.mark.parametrize("page_size", [1, 16])
@pytest.mark.parametrize("case", sorted(CASES))
def test_flashinfer_matches_torch(page_size, case):
    q_lens, kv_lens = CASES[case]
    want, got = _attention_case(page_size, q_lens, kv_lens)
    assert got.shape == want.shape
    rel = rel_err(got, want)
    print(f"{case} page_size={page_size}: relative error {rel:.2e}")
    assert rel < 1e-2


@gpu
@needs_cuda
@pytest.mark.parametrize("page_size", [1, 16])
def test_replan_leaves_what_flashinfer_plan_leaves(page_size):
    """A graph wrapper re-planned by `_replan` holds the same page lists, plan and schedule as
    after `wrapper.plan()` with the same batch (a size padded with dummy requests too)."""
    from types import SimpleNamespace

    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend
    from minisgl_edu.kvcache.allocator import PageAllocator
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    kv_lens = [1, 17, 700, 33, 64]
    pool = KVPool(1, 1024, page_size, HKV, D, torch.bfloat16, "cuda")
    table = PageTable(8, -(-max(kv_lens) // page_size) + 1, "cuda", fill=pool.dummy_page)
    alloc = PageAllocator(1024)
    rows = []
    for n in kv_lens:
        rows.append(table.alloc_row())
        pages = alloc.allocate(-(-n // page_size))
        random.Random(n).shuffle(pages)
        table.append(rows[-1], pages)
    fi = FlashInferBackend(pool, table, num_qo_heads=HQ)
    if not fi.fast_replan:
        pytest.skip("this FlashInfer version plans through wrapper.plan()")
    inputs = SimpleNamespace(out_loc=torch.zeros(8, dtype=torch.int64, device="cuda"))
    fi.init_graphs([8], inputs)
    fi.prepare_for_capture(8, inputs)  # the first plan of each size is always wrapper.plan()
    wrapper = fi._graph_wrappers[8]

    def state() -> tuple:
        torch.cuda.synchronize()
        n = fi._graph_indptr[8].item()
        return (
            list(wrapper._plan_info),
            wrapper._int_workspace_buffer.clone(),
            fi._graph_indptr.clone(),
            fi._graph_last.clone(),
            fi._graph_indices[:n].clone(),
        )

    for batch in (kv_lens, kv_lens[:3]):
        fi.fast_replan = False
        fi.prepare_for_replay(8, rows[: len(batch)], batch, inputs)
        want = state()
        fi._graph_indices.zero_()
        fi._graph_last.zero_()
        fi.fast_replan = True
        fi.prepare_for_replay(8, rows[: len(batch)], batch, inputs)
        got = state()
        assert got[0] == want[0]
        for a, b in zip(got[1:], want[1:]):
            assert torch.equal(a, b)


# ---------------------------------------------------------------------- fused model kernels
def _perturbed_tiny_qwen3(tiny_qwen3_dir, device: str = "cuda", dtype: torch.dtype = torch.bfloat16):
    """The tiny Qwen3 (plain modules) with every RMSNorm weight perturbed (weights of 1.0 would
    hide a misplaced norm weight), and a float32 copy of it: the reference."""
    import copy

    from minisgl_edu.models import load_model

    model, cfg = load_model(tiny_qwen3_dir, dtype=dtype, device=device)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.add_((0.2 * torch.randn(p.shape, generator=gen)).to(p))
    return model, cfg, copy.deepcopy(model).float()


@gpu
@needs_cuda
def test_fused_kernels_match_torch_layers(tiny_qwen3_dir):
    """FlashInfer's rmsnorm / fused_add_rmsnorm / q-k norm / RoPE / silu_and_mul (the fused CUDA
    layers, `models/cuda_layers.py`) against the plain torch layers, both measured against the same
    weights in float32."""
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers

    model, cfg, ref_model = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    ps = prompts(2, 20, 150, seed=3)
    want = paged_logits(ref_model, cfg, ps)
    plain = paged_logits(model, cfg, ps)
    fused = paged_logits(use_cuda_layers(model, fused=True, triton=()), cfg, ps)
    use_plain_layers(model)
    err_fused, err_plain = rel_err(fused, want), rel_err(plain, want)
    print(f"fused kernels: relative error vs float32 {err_fused:.2e} (torch layers in bf16: {err_plain:.2e})")
    assert err_fused < max(1e-2, 1.5 * err_plain)


# ---------------------------------------------------------------------- our Triton kernels in the model
@gpu
@needs_cuda
def test_triton_kernels_in_the_model_match_float32(tiny_qwen3_dir):
    """The whole model on the FlashInfer backend, with our Triton kernels and without them,
    against the same weights in float32: prefill (rope kernel) and decode (rope + skinny GEMM)."""
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers

    model, cfg, ref_model = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    ps = prompts(3, 20, 150, seed=4)
    want = paged_logits(ref_model, cfg, ps)
    errors = {}
    for name, on in [("rope,gemm", ("rope", "gemm")), ("none", ())]:
        use_cuda_layers(use_plain_layers(model), fused=True, triton=on)
        errors[name] = rel_err(paged_logits(model, cfg, ps, "flashinfer"), want)
    print("Triton kernels: relative error vs float32 " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    assert errors["rope,gemm"] < max(1e-2, 1.5 * errors["none"])


@gpu
@needs_cuda
def test_batch1_folded_layer_matches_float32(tiny_qwen3_dir, monkeypatch):
    """One request alone: its decode steps take the batch-1 path (norms and activation folded
    into the one-row matmuls). Its logits against float32, as good as the unfused kernels'."""
    from minisgl_edu.kernels import gemv as gemv_module
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers

    model, cfg, ref_model = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    ps = prompts(1, 20, 150, seed=6)
    want = paged_logits(ref_model, cfg, ps)
    prologues = []
    real_gemv = gemv_module.gemv
    monkeypatch.setattr(
        gemv_module, "gemv", lambda *a, **kw: prologues.append(kw.get("prologue")) or real_gemv(*a, **kw)
    )
    errors = {}
    for name in ("rope,gemm,gemv,fold", "rope,gemm"):
        use_cuda_layers(use_plain_layers(model), fused=True, triton=name.split(","))
        errors[name] = rel_err(paged_logits(model, cfg, ps, "flashinfer"), want)
    print("batch-1 path: relative error vs float32 " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    # 4 decode steps x 2 layers: qkv ("norm" at layer 0, else "add_norm"), gate_up, down
    assert prologues.count("silu_mul") == 8 and prologues.count("norm") == 4 and prologues.count("add_norm") == 12
    assert errors["rope,gemm,gemv,fold"] < max(1e-2, 1.5 * errors["rope,gemm"])


@gpu
@needs_cuda
def test_pdl_changes_no_logit(tiny_qwen3_dir, monkeypatch):
    """Programmatic dependent launch only lets kernels start early: with it on, every logit must be
    bit-identical to the run without it. A kernel that read its input before `gdc_wait` (a race
    with the previous kernel) would show here as different values."""
    from minisgl_edu.engine.config import TRITON_KERNELS
    from minisgl_edu.kernels import pdl
    from minisgl_edu.models.cuda_layers import use_cuda_layers

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("PDL needs compute capability 9.0 (Hopper) or newer")
    assert pdl.enabled(torch.device("cuda")), "PDL should be on by default on this GPU"
    model, cfg, _ = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    use_cuda_layers(model, fused=True, triton=TRITON_KERNELS)
    ps = prompts(3, 1, 5, seed=5)  # <= 15 tokens in all: the skinny GEMM runs in the prefill too
    with_pdl = paged_logits(model, cfg, ps, "flashinfer,triton")
    monkeypatch.setattr(pdl, "enabled", lambda device: False)
    without = paged_logits(model, cfg, ps, "flashinfer,triton")
    assert torch.equal(with_pdl, without)


# ---------------------------------------------------------------------- CUDA graphs
@gpu
@needs_cuda
@pytest.mark.parametrize("n", [8, 5])  # 8: a captured size; 5: padded to 8
def test_cuda_graph_greedy_matches_eager(tiny_qwen3_dir, n):
    eager = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer")
    graph = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=16, attention_backend="flashinfer")
    assert eager.engine.graph_runner is None and graph.engine.graph_runner is not None
    ps = prompts(n, 5, 60, seed=n)
    a = generate(eager, ps, 40, overlap=False)
    b = generate(graph, ps, 40, overlap=False)
    assert a == b
    assert all(len(t) == 40 for t in a)


@gpu
@needs_cuda
@pytest.mark.parametrize("backend", ["flashinfer", "auto"])  # auto: our Triton decode kernel for small batches
def test_verify_graphs_give_the_tokens_of_plain_decoding(tiny_qwen3_dir, backend, monkeypatch):
    """Speculative decoding on the GPU: verify batches replay token-row graphs (each position a
    decode row of its request), and the greedy tokens are those without drafts."""
    from minisgl_edu.engine.cuda_graph import CudaGraphRunner

    replays = []
    run_rows = CudaGraphRunner.run_rows
    monkeypatch.setattr(CudaGraphRunner, "run_rows", lambda self, *a: replays.append(len(a[0])) or run_rows(self, *a))
    plain = make_scheduler(tiny_qwen3_dir, "cuda", attention_backend=backend)
    spec = make_scheduler(tiny_qwen3_dir, "cuda", attention_backend=backend, speculative_algorithm="ngram")
    rng = random.Random(1)
    ps = [[rng.randrange(3, 500) for _ in range(rng.randint(2, 6))] * rng.randint(4, 12) for _ in range(6)]
    a = generate(plain, ps, 40, overlap=True)
    b = generate(spec, ps, 40, overlap=True)
    assert a == b
    assert spec.speculator.num_draft_tokens == 7  # the CUDA default: a request's 8 rows fill the 8-row graph
    assert replays and spec.speculator.accepted_tokens_total > 0
    assert_all_pages_back(spec)


@gpu
@needs_cuda
@pytest.mark.parametrize("backend", ["flashinfer", "auto"])
def test_short_prefills_replay_token_row_graphs(tiny_qwen3_dir, backend, monkeypatch):
    """A prefill of few tokens replays a token-row graph (each prompt token a decode row of its
    request), after a prefix-cache hit too, and gives eager's greedy tokens; a prompt whose rows
    would read too much runs eagerly."""
    from minisgl_edu.engine import cuda_graph
    from minisgl_edu.engine.cuda_graph import CudaGraphRunner

    replays = []
    run_rows = CudaGraphRunner.run_rows
    monkeypatch.setattr(CudaGraphRunner, "run_rows", lambda self, *a: replays.append(a[1]) or run_rows(self, *a))
    monkeypatch.setattr(cuda_graph, "ROW_GRAPH_MAX_READS", 2000)  # a 63-token prompt reads 2016
    eager = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer")
    graph = make_scheduler(
        tiny_qwen3_dir, "cuda", max_running_requests=64, cuda_graph_max_bs=64, attention_backend=backend
    )
    first = prompts(3, 5, 20, seed=41)
    base = prompts(1, 40, 40, seed=42)
    # the same first 32 tokens (two pages) as `base`: a cache hit, then rows from position 32 on
    hits = [base[0][:32] + q for q in prompts(2, 3, 9, seed=43)]
    longer = prompts(1, 63, 63, seed=44)
    for ps in (first, base, hits, longer):
        assert generate(graph, ps, 12, overlap=True) == generate(eager, ps, 12, overlap=False)
    prefills = [pos for pos in replays if len(pos) > 1]  # decode graphs take the 1-row steps
    assert any(pos[0] == 0 for pos in prefills), "no prefill from position 0 replayed a graph"
    assert any(pos[0] == 32 for pos in prefills), "no prefill after a cache hit replayed a graph"
    assert all(len(pos) < 63 for pos in replays), "the 63-token prompt should have run eagerly"
    assert_all_pages_back(graph)


@gpu
@needs_cuda
@pytest.mark.parametrize("overlap", [True, False])  # input tokens from last_tokens, or sent from the host
@pytest.mark.parametrize("n", [1, 3])  # graph sizes 1 and 4 (padded): both run our decode attention
def test_split_kv_graphs_greedy_match_eager(tiny_qwen3_dir, n, overlap):
    """The small graphs of the default hybrid backend (one input copy, token ids gathered and
    greedy tokens picked inside the graph, our Triton decode attention) give eager FlashInfer's
    greedy tokens; seeded sampling through them repeats itself."""
    from minisgl_edu.attention import HybridBackend
    from minisgl_edu.attention.triton_backend import TritonDecodeBackend

    ps = prompts(n, 200, 400, seed=20 + n)
    eager = generate(
        make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer"),
        ps,
        30,
        overlap=False,
    )
    graph = make_scheduler(tiny_qwen3_dir, "cuda")  # "auto": flashinfer,triton
    attn = graph.engine.attn
    assert graph.engine.attention_backend == "flashinfer,triton" and isinstance(attn, HybridBackend)
    assert isinstance(attn.decode_backend, TritonDecodeBackend) and {1, 4} <= set(attn.decode_backend._graphs)
    assert generate(graph, ps, 30, overlap=overlap) == eager
    sampled = [generate(graph, ps, 30, overlap=overlap, temperature=0.9, top_k=40, seed=3) for _ in range(2)]
    assert sampled[0] == sampled[1] and sampled[0] != eager
    assert_all_pages_back(graph)


@gpu
@needs_cuda
def test_fp8_kv_graphs_match_eager_and_fill_twice_the_pool(tiny_qwen3_dir):
    """--kv-cache-dtype fp8_e4m3 on CUDA: the default backend decodes every batch size with our FP8
    kernel, in graphs (requests of 200-400 tokens, 9 of them: graph size 12, padded), and gives the
    greedy tokens of eager FlashInfer over the same FP8 pages dequantized; the pool holds ~1.9x
    the tokens of bfloat16 in the same memory."""
    from minisgl_edu.attention import HybridBackend
    from minisgl_edu.attention.triton_backend import TritonDecodeBackend
    from minisgl_edu.kvcache.pool import KVPool

    ps = prompts(9, 200, 400, seed=47)
    eager = make_scheduler(
        tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer", kv_cache_dtype="fp8_e4m3"
    )
    assert eager.engine.pool.quantized and not eager.engine.attn.supports_graphs
    want = generate(eager, ps, 30, overlap=False)
    graph = make_scheduler(tiny_qwen3_dir, "cuda", kv_cache_dtype="fp8_e4m3")
    attn = graph.engine.attn
    assert isinstance(attn, HybridBackend) and isinstance(attn.decode_backend, TritonDecodeBackend)
    assert attn.decode_backend.max_decode_batch is None and 16 in attn.decode_backend._graphs
    assert generate(graph, ps, 30, overlap=True) == want
    assert_all_pages_back(graph)
    mc = graph.engine.model_config
    ratio = KVPool.bytes_per_token(mc.num_layers, 8, 128, torch.bfloat16) / KVPool.bytes_per_token(
        mc.num_layers, 8, 128, graph.engine.pool.kv_dtype
    )
    assert 1.9 < ratio < 2


# ---------------------------------------------------------------------- overlap scheduling
@pytest.mark.parametrize("device", DEVICES)
def test_overlap_greedy_matches_normal(tiny_qwen3_dir, device):
    # Several chunked prompts. The naive cache: with the radix cache the second run would reuse the
    # first run's prompt pages and compute other batches (short uncached tails instead of whole
    # chunks), and a kernel may round a row differently at another batch size (cuBLAS and our
    # skinny GEMM can): same batches is what this test is about.
    sched = make_scheduler(tiny_qwen3_dir, device, max_prefill_tokens=128, cache="naive")
    ps = prompts(12, 5, 300, seed=1)
    lens = [1, 7, 33, 2, 50, 9, 16, 3, 41, 28, 5, 12]  # finish at different steps
    normal, overlap = [], []
    for p, n in zip(ps, lens):  # one request per max_tokens value, all submitted together below
        pass
    base_n = 1000 * (sched.batch_count + 1)
    for run, out in (("normal", normal), ("overlap", overlap)):
        base = base_n if run == "normal" else base_n + 500
        for i, (p, n) in enumerate(zip(ps, lens)):
            sched.add_request(base + i, p, SamplingParams(max_tokens=n, ignore_eos=True))
        sched.run_until_idle(overlap=(run == "overlap"))
        toks: dict[int, list[int]] = {base + i: [] for i in range(len(ps))}
        for msg in sched.io.drain():
            if msg.next_token >= 0:
                toks[msg.uid].append(msg.next_token)
        out.extend(toks[base + i] for i in range(len(ps)))
        assert_all_pages_back(sched)
    assert [len(t) for t in overlap] == lens
    assert overlap == normal


@pytest.mark.parametrize("device", DEVICES)
def test_abort_storm_under_overlap(tiny_qwen3_dir, device):
    sched = make_scheduler(tiny_qwen3_dir, device, max_prefill_tokens=96, num_pages=256)
    rng = random.Random(7)
    uid = 0
    finished: set[int] = set()
    submitted: set[int] = set()
    for step in range(400):
        if step < 250 and rng.random() < 0.5:
            for _ in range(rng.randint(1, 4)):
                p = [rng.randrange(3, 500) for _ in range(rng.randint(1, 200))]
                sp = SamplingParams(
                    max_tokens=rng.randint(1, 40),
                    ignore_eos=rng.random() < 0.5,
                    temperature=rng.choice([0.0, 0.0, 0.8]),
                    top_k=rng.choice([-1, 20]),
                    top_p=rng.choice([1.0, 0.9]),
                    seed=rng.choice([None, 5]),
                )
                sched.add_request(uid, p, sp)
                submitted.add(uid)
                uid += 1
        live = list(sched.reqs)
        for victim in rng.sample(live, min(len(live), rng.choice([0, 0, 1, 3]))):
            sched.abort(victim)  # waiting, mid chunked prefill, or decoding, with batches in flight
        sched.overlap_step()
        for msg in sched.io.drain():
            if msg.finished:
                assert msg.uid not in finished, "two final messages for one request"
                finished.add(msg.uid)
        if step >= 250 and sched.is_idle and not sched.has_in_flight:
            break
    while sched.has_in_flight or not sched.is_idle:
        sched.overlap_step()
        finished.update(m.uid for m in sched.io.drain() if m.finished)
    assert finished == submitted
    assert_all_pages_back(sched)
