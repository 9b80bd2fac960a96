"""GPU path: FlashInfer attention against the torch reference, CUDA graphs, overlap scheduling.

Tests marked `gpu` need CUDA (and FlashInfer) and are skipped without it; run them on the GPU
machine with `pytest -q tests/test_gpu.py`. The overlap-scheduling tests also run on CPU (the
loop's bookkeeping does not depend on the device), so they guard the logic on every machine.

The tiny test model has Qwen3-0.6B's attention shape (16 query heads, 8 KV heads, head_dim 128),
so on a fresh GPU machine FlashInfer JIT-compiles the same kernels the benchmark uses.
"""

from __future__ import annotations

import os
import random

import pytest
import torch

from minisgl_edu.core import SamplingParams
from minisgl_edu.models.testing import IdTokenizer

HAS_CUDA = torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
# The tests of our Triton kernels against a reference (marked `kernel`) also run on CPU under
# Triton's interpreter: tests/test_kernels_interpreter.py runs them with TRITON_INTERPRET=1, in
# float16 (the interpreter's bfloat16 arithmetic is not trustworthy).
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
KDEV, KDT = ("cpu", torch.float16) if INTERPRET else ("cuda", torch.bfloat16)
needs_kernels = pytest.mark.skipif(not (HAS_CUDA or INTERPRET), reason="needs CUDA or Triton's interpreter")
DEVICES = ["cpu", pytest.param("cuda", marks=[gpu, needs_cuda])]

HQ, HKV, D = 16, 8, 128  # the attention shape of `tiny_qwen3_dir` (conftest.py): Qwen3-0.6B's


def make_scheduler(model_dir: str, device: str, **kw):
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    cfg = dict(
        model=model_dir, device=device, num_pages=2048, page_size=16, max_running_requests=16, cuda_graph_max_bs=16
    )
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg), QueueIO(), tokenizer=IdTokenizer())


def prompts(n: int, lo: int, hi: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 500) for _ in range(rng.randint(lo, hi))] for _ in range(n)]


def generate(sched, ps, max_tokens, overlap: bool, **sp) -> list[list[int]]:
    base = 1000 * (sched.batch_count + 1)
    for i, p in enumerate(ps):
        sched.add_request(base + i, p, SamplingParams(max_tokens=max_tokens, ignore_eos=True, **sp))
    sched.run_until_idle(overlap=overlap)
    out: dict[int, list[int]] = {base + i: [] for i in range(len(ps))}
    for msg in sched.io.drain():
        if msg.next_token >= 0:
            out[msg.uid].append(msg.next_token)
    assert not sched.reqs and not sched.has_in_flight
    return [out[base + i] for i in range(len(ps))]


def assert_all_pages_back(sched) -> None:
    sched.cache.check()
    assert sched.cache.page_table.num_free_rows == sched.cache.page_table.max_reqs
    assert sched.cache.num_available == sched.cache.num_pages
    assert sched.cache.num_deferred == 0 and not sched.cache._pins and not sched._ahead


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


def _rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


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
    rel = _rel(got, want)
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


def _paged_logits(model, cfg, ps: list[list[int]], backend: str = "torch") -> torch.Tensor:
    """Every prompt position's logits of one prefill of `ps`, then 4 decode steps (fixed tokens),
    on the attention backend called `backend` (`attention.create_backend`)."""
    from minisgl_edu.attention import create_backend
    from minisgl_edu.models.testing import PagedRunner

    runner = PagedRunner(model, cfg, page_size=16, max_tokens=1024, max_reqs=4, max_len=256)
    if backend != "torch":
        runner.backend = create_backend(backend, runner.pool, runner.page_table, num_qo_heads=cfg.num_heads)
    rows = [runner.add_request() for _ in ps]
    out = runner.step(list(zip(rows, ps)), all_logits=True)
    for step in range(4):
        out += runner.step([(r, [7 + step]) for r in rows])
    return torch.cat([o.reshape(-1, o.shape[-1]) for o in out]).float()


@gpu
@needs_cuda
def test_fused_kernels_match_torch_layers(tiny_qwen3_dir):
    """FlashInfer's rmsnorm / fused_add_rmsnorm / q-k norm / RoPE / silu_and_mul (the fused CUDA
    layers, `models/cuda_layers.py`) against the plain torch layers, both measured against the same
    weights in float32."""
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers

    model, cfg, ref_model = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    ps = prompts(2, 20, 150, seed=3)
    want = _paged_logits(ref_model, cfg, ps)
    plain = _paged_logits(model, cfg, ps)
    fused = _paged_logits(use_cuda_layers(model, fused=True, triton=()), cfg, ps)
    use_plain_layers(model)
    err_fused, err_plain = _rel(fused, want), _rel(plain, want)
    print(f"fused kernels: relative error vs float32 {err_fused:.2e} (torch layers in bf16: {err_plain:.2e})")
    assert err_fused < max(1e-2, 1.5 * err_plain)


# ---------------------------------------------------------------------- our Triton kernels
@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("m", [1, 5, 16])
@pytest.mark.parametrize("n,k,bias", [(4096, 1024, False), (1024, 3072, True), (200, 576, False)])
def test_skinny_gemm_matches_float32(m, n, k, bias):
    from minisgl_edu.kernels.gemv import gemv
    from minisgl_edu.kernels.skinny_gemm import skinny_linear, supports

    g = torch.Generator(device=KDEV).manual_seed(m * n + k)
    x = torch.randn(m, k, device=KDEV, generator=g).to(KDT)
    w = (torch.randn(n, k, device=KDEV, generator=g) / k**0.5).to(KDT)
    b = torch.randn(n, device=KDEV, generator=g).to(KDT) if bias else None
    assert supports(x, w) or INTERPRET  # supports() asks for CUDA
    want = torch.nn.functional.linear(x.float(), w.float(), None if b is None else b.float())
    ref = torch.nn.functional.linear(x, w, b)  # cuBLAS in bf16: the error to expect
    for got in [skinny_linear(x, w, b)] + ([gemv(x, w, b)[0]] if m == 1 else []):  # gemv: one row only
        assert got.shape == (m, n) and got.dtype == KDT
        assert _rel(got, want) < max(5e-3, 1.5 * _rel(ref, want))


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("n,k", [(4096, 1024), (1024, 3072), (200, 576)])
def test_gemv_prologues_match_float32(n, k):
    """The one-row kernel with the step before the matmul folded in (kernels/gemv.py), against
    the unfused steps in float32; "add_norm" must also return the residual sum, rounded as stored."""
    from minisgl_edu.kernels.gemv import gemv

    g = torch.Generator(device=KDEV).manual_seed(n + k)
    w = (torch.randn(n, k, device=KDEV, generator=g) / k**0.5).to(KDT)
    x, r = (torch.randn(1, k, device=KDEV, generator=g).to(KDT) for _ in range(2))
    nw = (1 + 0.2 * torch.randn(k, device=KDEV, generator=g)).to(KDT)
    gate_up = torch.randn(1, 2 * k, device=KDEV, generator=g).to(KDT)
    gate, up = gate_up.float().chunk(2, dim=-1)

    def rms(h):
        return (nw.float() * torch.nn.functional.rms_norm(h.float(), (k,), eps=1e-6).to(KDT).float()).to(KDT)

    cases = {
        "silu_mul": (gemv(gate_up, w, prologue="silu_mul"), (torch.nn.functional.silu(gate) * up).to(KDT)),
        "norm": (gemv(x, w, prologue="norm", norm_weight=nw, eps=1e-6), rms(x)),
        "add_norm": (gemv(x, w, prologue="add_norm", residual=r, norm_weight=nw, eps=1e-6), rms(x + r)),
    }
    for name, ((y, new_residual), x_in) in cases.items():
        want = x_in.float() @ w.float().T
        ref = x_in @ w.T  # cuBLAS in bf16: the error to expect
        assert _rel(y, want) < max(5e-3, 1.5 * _rel(ref, want)), name
        assert (new_residual is None) == (name != "add_norm")
    assert torch.equal(cases["add_norm"][0][1], x + r)


def _rope_reference(qkv, pos, rot, qw, kw, eps):
    """float32 q, k, v [T, heads, D] of qkv rows: q/k RMSNorm (when weights are given), then RoPE."""
    from minisgl_edu.models.rope import apply_rotary

    T = qkv.shape[0]
    rq, rk, rv = (t.float() for t in qkv.split([HQ * D, HKV * D, HKV * D], dim=-1))
    rq, rk, rv = rq.view(T, HQ, D), rk.view(T, HKV, D), rv.view(T, HKV, D)
    if qw is not None:
        rq = torch.nn.functional.rms_norm(rq, (D,), eps=eps) * qw.float()
        rk = torch.nn.functional.rms_norm(rk, (D,), eps=eps) * kw.float()
    cos, sin = rot.lookup(pos, torch.float32)
    return apply_rotary(rq, cos, sin), apply_rotary(rk, cos, sin), rv


def _rope_inputs(T: int, slots: int, seed: int):
    """T tokens' qkv rows, positions (the ends of the table among them) and distinct KV slots."""
    g = torch.Generator(device=KDEV).manual_seed(seed)
    qkv = torch.randn(T, (HQ + 2 * HKV) * D, device=KDEV, generator=g).to(KDT)
    pos = torch.randint(0, 4096, (T,), device=KDEV, generator=g)
    pos[:3] = torch.tensor([0, 4095, 17])
    loc = torch.randperm(slots, device=KDEV, generator=g)[:T]
    qw = (1 + 0.2 * torch.randn(D, device=KDEV, generator=g)).to(KDT)
    kw = (1 + 0.2 * torch.randn(D, device=KDEV, generator=g)).to(KDT)
    return qkv, pos, loc, qw, kw


@gpu
@pytest.mark.kernel
@needs_kernels
def test_qk_rope_store_gives_a_token_the_same_bits_in_any_batch():
    """A token's q and its K/V come out as the same bits alone, in a decode-sized batch and in a
    prompt chunk: otherwise a mixed batch (prompt chunk and decode rows) samples other tokens than
    separate batches do (tests/test_mixed_batches.py)."""
    from minisgl_edu.kernels.qk_rope_store import qk_rope_store
    from minisgl_edu.models.rope import RotaryEmbedding

    rot = RotaryEmbedding(D, 4096, 1e6).to(KDEV)
    rot.build_cache(KDEV)
    qkv, pos, loc, qw, kw = _rope_inputs(70, 128, seed=3)

    def run(rows):
        k_pool = torch.zeros(128, HKV, D, device=KDEV, dtype=KDT)
        v_pool = torch.zeros_like(k_pool)
        q = qk_rope_store(
            qkv[rows], pos[rows], rot.cos_sin_table(), qw, kw, 1e-6, loc[rows], k_pool, v_pool, HQ, HKV, D
        )
        return q, k_pool[loc[rows]], v_pool[loc[rows]]

    everything = run(torch.arange(70))
    for rows in ([69], [3, 4, 5], list(range(40, 60))):
        for part, whole in zip(run(torch.tensor(rows)), everything):
            assert torch.equal(part, whole[rows]), rows


# 7 tokens: one tile, part-full (a decode batch); 70: nine tiles (a prompt chunk).
@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("T", [7, 70])
@pytest.mark.parametrize("norm", [True, False])
def test_qk_rope_store_matches_torch(norm, T):
    """One kernel = q/k RMSNorm + RoPE + K/V written at their slots, and nothing else touched."""
    from minisgl_edu.kernels.qk_rope_store import qk_rope_store
    from minisgl_edu.models.rope import RotaryEmbedding

    slots, eps = 128, 1e-6
    rot = RotaryEmbedding(D, 4096, 1e6).to(KDEV)
    rot.build_cache(KDEV)
    qkv, pos, loc, qw, kw = _rope_inputs(T, slots, seed=1)
    k_pool = torch.zeros(slots, HKV, D, device=KDEV, dtype=KDT)
    v_pool = torch.zeros_like(k_pool)
    q = qk_rope_store(
        qkv, pos, rot.cos_sin_table(), qw if norm else None, kw if norm else None, eps, loc, k_pool, v_pool, HQ, HKV, D
    )
    rq, rk, rv = _rope_reference(qkv, pos, rot, qw if norm else None, kw if norm else None, eps)
    print(f"qk_rope_store: q {_rel(q, rq):.1e}, k {_rel(k_pool[loc], rk):.1e}, v {_rel(v_pool[loc], rv):.1e}")
    assert _rel(q, rq) < 5e-3 and _rel(k_pool[loc], rk) < 5e-3
    assert torch.equal(v_pool[loc], rv.to(KDT))
    others = torch.ones(slots, dtype=torch.bool, device=KDEV)
    others[loc] = False
    assert not k_pool[others].any() and not v_pool[others].any()


@gpu
@needs_cuda
def test_triton_kernels_in_the_model_match_float32(tiny_qwen3_dir):
    """The whole model on the FlashInfer backend, with our Triton kernels and without them,
    against the same weights in float32: prefill (rope kernel) and decode (rope + skinny GEMM)."""
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers

    model, cfg, ref_model = _perturbed_tiny_qwen3(tiny_qwen3_dir)
    ps = prompts(3, 20, 150, seed=4)
    want = _paged_logits(ref_model, cfg, ps)
    errors = {}
    for name, on in [("rope,gemm", ("rope", "gemm")), ("none", ())]:
        use_cuda_layers(use_plain_layers(model), fused=True, triton=on)
        errors[name] = _rel(_paged_logits(model, cfg, ps, "flashinfer"), want)
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
    want = _paged_logits(ref_model, cfg, ps)
    prologues = []
    real_gemv = gemv_module.gemv
    monkeypatch.setattr(
        gemv_module, "gemv", lambda *a, **kw: prologues.append(kw.get("prologue")) or real_gemv(*a, **kw)
    )
    errors = {}
    for name in ("rope,gemm,gemv,fold", "rope,gemm"):
        use_cuda_layers(use_plain_layers(model), fused=True, triton=name.split(","))
        errors[name] = _rel(_paged_logits(model, cfg, ps, "flashinfer"), want)
    print("batch-1 path: relative error vs float32 " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    # 4 decode steps x 2 layers: qkv ("norm" at layer 0, else "add_norm"), gate_up, down
    assert prologues.count("silu_mul") == 8 and prologues.count("norm") == 4 and prologues.count("add_norm") == 12
    assert errors["rope,gemm,gemv,fold"] < max(1e-2, 1.5 * errors["rope,gemm"])


def _torch_flashinfer():
    """Torch versions of the four FlashInfer ops the fused CUDA layers call (`rmsnorm`,
    `fused_add_rmsnorm`, RoPE from the cos/sin table, `silu_and_mul`), as a module named
    `flashinfer`: where FlashInfer does not exist (the CPU, under Triton's interpreter) the CUDA
    layers can still run, with our Triton kernels beside them."""
    import types

    F = torch.nn.functional

    def rmsnorm(x, weight, eps, out=None):
        y = (F.rms_norm(x.float(), (x.shape[-1],), eps=eps) * weight.float()).to(x.dtype)
        return y if out is None else out.copy_(y)

    def fused_add_rmsnorm(x, residual, weight, eps):
        residual.copy_((x.float() + residual.float()).to(x.dtype))
        x.copy_(rmsnorm(residual, weight, eps))

    def apply_rope_with_cos_sin_cache_inplace(positions, q, k, head_dim, cos_sin_cache, is_neox=True):
        assert is_neox
        cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)
        for x in (q, k):
            x1, x2 = x.float().chunk(2, dim=-1)
            c, s_ = cos[:, None, :], sin[:, None, :]
            x.copy_(torch.cat((x1 * c - x2 * s_, x2 * c + x1 * s_), dim=-1).to(x.dtype))

    def silu_and_mul(x):
        gate, up = x.float().chunk(2, dim=-1)
        return (F.silu(gate) * up).to(x.dtype)

    fi = types.ModuleType("flashinfer")
    fi.norm = types.SimpleNamespace(rmsnorm=rmsnorm, fused_add_rmsnorm=fused_add_rmsnorm)
    fi.rope = types.SimpleNamespace(apply_rope_with_cos_sin_cache_inplace=apply_rope_with_cos_sin_cache_inplace)
    fi.activation = types.SimpleNamespace(silu_and_mul=silu_and_mul)
    return fi


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("n", [2, 1])  # batch 2: skinny GEMM; batch 1: one-row matmuls with folded norms
def test_cuda_layers_on_the_hybrid_backend_match_float32(n, monkeypatch, request):
    """What the engine builds on CUDA, in one model: every CUDA variant swapped in
    (`use_cuda_layers` with all Triton kernels) on the hybrid backend (prefill: FlashInfer, or the
    torch backend on the CPU; decode: our Triton kernel). Its logits over a prefill and 4 decode
    steps against the plain model in float32, as good as the plain model's in half precision.
    Under Triton's interpreter FlashInfer's fused ops are torch stand-ins (`_torch_flashinfer`)."""
    import copy
    import sys

    from minisgl_edu.attention.triton_backend import TritonDecodeBackend
    from minisgl_edu.engine.config import TRITON_KERNELS
    from minisgl_edu.kernels import qk_rope_store as rope_module
    from minisgl_edu.models import cuda_layers
    from minisgl_edu.models.config import ModelConfig
    from minisgl_edu.models.decoder import create_model
    from minisgl_edu.models.testing import tiny_hf_config

    if INTERPRET:
        monkeypatch.setitem(sys.modules, "flashinfer", _torch_flashinfer())
        monkeypatch.setattr(cuda_layers, "_fi", lambda: sys.modules["flashinfer"])
    # On CUDA the tiny Qwen3 with the benchmark's head shape (FlashInfer compiles per head size);
    # under the interpreter a smaller one (head_dim 16), for time.
    if INTERPRET:
        cfg = ModelConfig.from_hf(tiny_hf_config("qwen3"))
    else:
        cfg = ModelConfig.from_dir(request.getfixturevalue("tiny_qwen3_dir"))
    model = create_model(cfg, dtype=KDT, device=KDEV, seed=n)
    gen = torch.Generator().manual_seed(n)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.add_((0.2 * torch.randn(p.shape, generator=gen)).to(p))
    ref_model = copy.deepcopy(model).float()
    ps = prompts(n, 3, 7, seed=30 + n)
    ps = [[t % cfg.vocab_size for t in p] for p in ps]
    want = _paged_logits(ref_model, cfg, ps)
    plain = _paged_logits(model, cfg, ps)
    calls = {"decode": 0, "rope": 0}
    real_run, real_rope = TritonDecodeBackend.forward, rope_module.qk_rope_store
    monkeypatch.setattr(
        TritonDecodeBackend,
        "forward",
        lambda self, *a: calls.__setitem__("decode", calls["decode"] + 1) or real_run(self, *a),
    )
    monkeypatch.setattr(
        rope_module,
        "qk_rope_store",
        lambda *a, **kw: calls.__setitem__("rope", calls["rope"] + 1) or real_rope(*a, **kw),
    )
    cuda_layers.use_cuda_layers(model, fused=True, triton=TRITON_KERNELS)
    layer = model.model.layers[0]
    assert type(layer) is cuda_layers.CudaDecoderLayer and layer.fold
    assert type(layer.self_attn) is cuda_layers.TritonRopeAttention
    assert type(layer.mlp.gate_up_proj) is cuda_layers.CudaColumnParallelLinear
    got = _paged_logits(model, cfg, ps, "torch,triton" if INTERPRET else "flashinfer,triton")
    # 2 layers: 1 prefill + 4 decode steps through the rope kernel, the 4 decode steps through Triton
    assert calls == {"decode": 4 * cfg.num_layers, "rope": 5 * cfg.num_layers}
    err, err_plain = _rel(got, want), _rel(plain, want)
    print(f"CUDA layers, hybrid backend, batch {n}: relative error vs float32 {err:.2e} (plain: {err_plain:.2e})")
    assert err < max(1e-2, 1.5 * err_plain)
    cuda_layers.use_plain_layers(model)  # back to the plain model: its logits again (bit for bit on the CPU)
    again = _paged_logits(model, cfg, ps)
    assert torch.equal(again, plain) if INTERPRET else _rel(again, plain) < 1e-3


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
    with_pdl = _paged_logits(model, cfg, ps, "flashinfer,triton")
    monkeypatch.setattr(pdl, "enabled", lambda device: False)
    without = _paged_logits(model, cfg, ps, "flashinfer,triton")
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
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("page_size", [1, 16])
@pytest.mark.parametrize("lens", [[1], [700], [15, 16, 17], [1000, 1, 33, 300]])
def test_split_kv_decode_matches_float32(page_size, lens):
    """Our decode attention for small graphs (kernels/decode_attention.py) against float32
    attention over the same pages: scattered pages, lengths not a multiple of the page, a
    request of one token (most of its splits empty), and one of 1,000."""
    from minisgl_edu.kernels.decode_attention import SplitKVDecode

    # the kernel's own choice of splits (16 to 32 here: about 512 programs) on the GPU; under the
    # interpreter, which pays per program, 4 splits, except for the one-token request that keeps
    # the own choice (31 of its 32 splits empty)
    splits = 4 if INTERPRET and lens != [1] else 0

    g = torch.Generator(device=KDEV).manual_seed(page_size + sum(lens))
    num_pages = sum((n + page_size - 1) // page_size for n in lens) + 8
    k_pages, v_pages = (torch.randn(num_pages, page_size, HKV, D, device=KDEV, generator=g).to(KDT) for _ in range(2))
    q = torch.randn(len(lens), HQ, D, device=KDEV, generator=g).to(KDT)
    perm = torch.randperm(num_pages, device=KDEV, generator=g).to(torch.int32)
    indptr = [0]
    for n in lens:
        indptr.append(indptr[-1] + (n + page_size - 1) // page_size)
    wrapper = SplitKVDecode(
        len(lens), HQ, HKV, D, page_size, D**-0.5, torch.zeros(num_pages, dtype=torch.int32, device=KDEV), splits=splits
    )
    host = (lambda t: t.pin_memory()) if HAS_CUDA else (lambda t: t)  # as plan_graph passes them
    wrapper.plan(
        host(torch.tensor(indptr, dtype=torch.int32)), perm[: indptr[-1]], host(torch.tensor(lens, dtype=torch.int32))
    )
    got = wrapper.run(q, (k_pages, v_pages))
    for b, n in enumerate(lens):
        pages = perm[indptr[b] : indptr[b + 1]].long()
        k, v = (
            x[pages].reshape(-1, HKV, D)[:n].float().repeat_interleave(HQ // HKV, dim=1) for x in (k_pages, v_pages)
        )
        probs = (torch.einsum("hd,thd->ht", q[b].float(), k) * D**-0.5).softmax(-1)
        want = torch.einsum("ht,thd->hd", probs, v)
        assert _rel(got[b], want) < 1e-2, (n, _rel(got[b], want))


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize(
    "page_size, lens, splits",  # splits 0: the kernel's own choice (32 at these batch sizes)
    [
        (16, [1], 0),
        (1, [300, 1] if INTERPRET else [1000, 1, 33, 300], 0),  # 32 splits: the interpreter pays per program
        (16, [700], 1),
        (1, [15, 16, 17], 1),
        (16, [1000, 1, 33, 300], 4),
        (16, [15, 16, 17], 4),
        (1, [700], 4),
    ],
)
def test_fp8_decode_matches_float32(page_size, lens, splits):
    """Our FP8 decode attention (kernels/decode_attention_fp8.py) against float32 attention over
    the same pages dequantized: scattered pages, lengths not a multiple of the page or the block,
    a request of one token, splits with no keys, one split (no merge). The pages are written by
    the pool's own `store`, with keys of very different sizes per token."""
    from minisgl_edu.kernels.decode_attention_fp8 import SplitKVDecodeFP8
    from minisgl_edu.kvcache.pool import FP8, KVPool

    g = torch.Generator(device=KDEV).manual_seed(page_size + sum(lens) + splits)
    num_pages = sum((n + page_size - 1) // page_size for n in lens) + 8
    pool = KVPool(1, num_pages, page_size, HKV, D, KDT, KDEV, kv_dtype=FP8)
    slots = (num_pages + 1) * page_size
    size = torch.exp(2 * torch.randn(slots, HKV, 1, device=KDEV, generator=g))  # e^-4 .. e^4 apart
    k = torch.randn(slots, HKV, D, device=KDEV, generator=g) * size
    v = torch.randn(slots, HKV, D, device=KDEV, generator=g)
    pool.store(0, torch.arange(slots, device=KDEV), k.to(KDT), v.to(KDT))
    q = torch.randn(len(lens), HQ, D, device=KDEV, generator=g).to(KDT) * 0.3
    perm = torch.randperm(num_pages, device=KDEV, generator=g).to(torch.int32)
    indptr = [0]
    for n in lens:
        indptr.append(indptr[-1] + (n + page_size - 1) // page_size)
    kernel = SplitKVDecodeFP8(
        len(lens), HQ, HKV, D, page_size, D**-0.5, torch.zeros(num_pages, dtype=torch.int32, device=KDEV), splits=splits
    )
    host = (lambda t: t.pin_memory()) if HAS_CUDA else (lambda t: t)
    kernel.plan(
        host(torch.tensor(indptr, dtype=torch.int32)), perm[: indptr[-1]], host(torch.tensor(lens, dtype=torch.int32))
    )
    for _ in range(2):  # twice: the merge counters are back at 0 after a run
        got = kernel.run(q, (pool.k[0], pool.v[0], pool.k_scale[0], pool.v_scale[0]))
        for b, n in enumerate(lens):
            pages = perm[indptr[b] : indptr[b + 1]].long()[None]
            # dequantized in float32: in bfloat16 the reference itself is 2^-9 off per number, and a
            # score of 100 then moves by ~0.1
            kd, vd = (x[0, :n].repeat_interleave(HQ // HKV, dim=1) for x in pool.load_pages(0, pages, torch.float32))
            probs = (torch.einsum("hd,thd->ht", q[b].float(), kd) * D**-0.5).softmax(-1)
            want = torch.einsum("ht,thd->hd", probs, vd)
            assert _rel(got[b], want) < 1e-2, (n, _rel(got[b], want))


@gpu
@pytest.mark.kernel
@needs_kernels
def test_fp8_triton_backend_gives_the_torch_backends_tokens(tiny_model_dir):
    """The `triton` decode backend over an FP8 pool (every batch size, our FP8 kernel; prefill by
    the torch backend) gives the greedy tokens of the torch backend over the same FP8 pages."""
    from minisgl_edu.attention.triton_backend import TritonDecodeBackend

    ps = prompts(3, 20, 60, seed=9)
    kw = dict(kv_cache_dtype="fp8_e4m3", dtype="float16" if INTERPRET else "bfloat16", cuda_graph_max_bs=0)
    # 3 decode steps: the interpreter runs the kernel's programs one by one (3 requests x 2 KV heads x 32
    # splits = 192 per layer and step)
    want = generate(make_scheduler(tiny_model_dir, KDEV, attention_backend="torch", **kw), ps, 4, overlap=False)
    sched = make_scheduler(tiny_model_dir, KDEV, attention_backend="torch,triton", **kw)
    decode = sched.engine.attn.decode_backend
    assert isinstance(decode, TritonDecodeBackend) and decode.max_decode_batch is None
    assert generate(sched, ps, 4, overlap=False) == want
    assert_all_pages_back(sched)


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("T", [7, 70])
@pytest.mark.parametrize("norm", [True, False])
def test_qk_rope_store_writes_fp8_pages(norm, T):
    """The RoPE kernel's K/V write into an FP8 pool: the same scales, and e4m3 numbers within one
    rounding step, as the pool's own `store` of the reference K/V; nothing else touched."""
    from minisgl_edu.kernels.qk_rope_store import qk_rope_store
    from minisgl_edu.kvcache.pool import FP8, KVPool
    from minisgl_edu.models.rope import RotaryEmbedding

    eps = 1e-6
    rot = RotaryEmbedding(D, 4096, 1e6).to(KDEV)
    rot.build_cache(KDEV)
    qkv, pos, loc, qw, kw = _rope_inputs(T, 8 * 16, seed=2)
    qkv[3] *= 40  # a token whose K and V are 40x larger: its own scale
    pool, ref = (KVPool(1, 8, 16, HKV, D, KDT, KDEV, kv_dtype=FP8) for _ in range(2))
    q = qk_rope_store(
        qkv, pos, rot.cos_sin_table(), qw if norm else None, kw if norm else None, eps, loc, pool.k[0], pool.v[0],
        HQ, HKV, D, k_scale=pool.k_scale[0], v_scale=pool.v_scale[0],
    )  # fmt: skip
    rq, rk, rv = _rope_reference(qkv, pos, rot, qw if norm else None, kw if norm else None, eps)
    ref.store(0, loc, rk, rv)
    assert _rel(q, rq) < 5e-3
    for got, want, gs, ws in ((pool.k, ref.k, pool.k_scale, ref.k_scale), (pool.v, ref.v, pool.v_scale, ref.v_scale)):
        assert torch.allclose(gs[0][loc], ws[0][loc], rtol=1e-2)
        # one e4m3 step at the top of the range (256..448: 32), and float32 rounding of the products
        step = ws[0][loc][..., None] * 32 * (1 + 1e-5)
        a, b = got[0][loc].float(), want[0][loc].float()
        ok = (a * gs[0][loc][..., None] - b * ws[0][loc][..., None]).abs().le(step)
        if INTERPRET:  # its float32 -> e4m3 rounding up to a power of two gives half of it (128 -> 64)
            ok |= (2 * a == b) & (b.abs() == 2 ** b.abs().log2().round())
        assert ok.all()
        others = torch.ones(pool.k.shape[1], dtype=torch.bool, device=KDEV)
        others[loc] = False
        assert not got[0][others].float().any() and bool((gs[0][others] == 1).all())


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("bs, vocab", [(1, 151936), (3, 5000)])
def test_greedy_head_matches_argmax(bs, vocab):
    """The end of a packed graph (kernels/greedy.py): float32 logits equal to `.float()`, tokens
    equal to torch.argmax (planted ties: the first index wins, across programs and within one; a
    row of negative logits), written to last_tokens at the rows; a second call gives the same
    (the row buffers were reset)."""
    from minisgl_edu.kernels.greedy import GreedyHead

    g = torch.Generator(device=KDEV).manual_seed(bs)
    logits = torch.randn(bs, vocab, device=KDEV, generator=g).to(KDT)
    logits[0, 7] = logits[0, vocab - 3] = 20.0
    if bs > 1:
        logits[1] = -logits[1].abs() - 1.0
        logits[2, 4090] = logits[2, 4091] = 30.0
    rows = torch.tensor([5, 2, 9][:bs], device=KDEV)
    last = torch.zeros(10, dtype=torch.int64, device=KDEV)
    head = GreedyHead(bs, torch.device(KDEV))
    for _ in range(2):
        out, tokens = head(logits, rows, last)
        assert torch.equal(out, logits.float())
        assert torch.equal(tokens, logits.float().argmax(-1)) and int(tokens[0]) == 7
        assert torch.equal(last[rows], tokens) and int(last.sum()) == int(tokens.sum())


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


# ---------------------------------------------------------------------- FlashInfer sampling
@gpu
@needs_cuda
def test_flashinfer_sampling():
    from minisgl_edu.core import Req
    from minisgl_edu.engine.flashinfer_sampler import sample_flashinfer
    from minisgl_edu.engine.sampler import make_generator

    torch.manual_seed(0)
    logits = torch.randn(6, 1000, device="cuda") * 3

    def reqs(**sp):
        out = []
        for i in range(6):
            params = SamplingParams(**sp)
            out.append(Req(uid=i, input_ids=[1], sampling_params=params, generator=make_generator(params, "cpu")))
        return out

    argmax = logits.argmax(-1)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=0.0)), argmax)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=1.0, top_k=1)), argmax)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=1.0, top_p=1e-6, seed=3)), argmax)
    a = sample_flashinfer(logits, reqs(temperature=1.0, top_k=50, top_p=0.9, seed=11))
    b = sample_flashinfer(logits, reqs(temperature=1.0, top_k=50, top_p=0.9, seed=11))
    assert torch.equal(a, b)  # seeded: reproducible
    # Every sampled token is inside its row's top 50.
    top50 = logits.topk(50, dim=-1).indices
    assert all(int(a[i]) in top50[i].tolist() for i in range(6))


# ---------------------------------------------------------------------- the logits chain on CUDA
CHAIN = dict(repetition_penalty=1.3, frequency_penalty=0.8, presence_penalty=0.4, logit_bias={7: 3.0, 11: -2.0})


@pytest.fixture(scope="module")
def tokenizer_dir(request) -> str:
    """The default model's tokenizer files: the converted model, or on a GPU machine that lacks its
    GGUF package, a folder holding only those files (MINISGL_EDU_TOKENIZER_DIR)."""
    return os.environ.get("MINISGL_EDU_TOKENIZER_DIR") or request.getfixturevalue("default_model_dir")


@gpu
@needs_cuda
def test_chain_and_flashinfer_sampling_give_the_torch_paths_greedy_tokens(tokenizer_dir):
    """The same logits through the chain on CUDA (grammar mask by XGrammar's CUDA kernel,
    FlashInfer for the sampled rows) and on CPU: the same processed logits and greedy tokens, and
    a sampled row under a mask only ever draws an allowed token."""
    from transformers import AutoTokenizer

    from minisgl_edu.core import Req
    from minisgl_edu.engine.grammar import GrammarCompiler
    from minisgl_edu.engine.sampler import Sampler, make_generator

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    vocab = 49152
    compiler = GrammarCompiler(tok, vocab, [tok.eos_token_id])
    torch.manual_seed(0)
    logits = torch.randn(6, vocab) * 4

    def reqs(device: str) -> list[Req]:
        out = []
        for i in range(6):
            sp = SamplingParams(**CHAIN) if i % 2 else SamplingParams()
            if i >= 3:
                sp = SamplingParams(regex="(yes|no)[0-9]+", temperature=1.0 if i == 5 else 0.0, seed=3, **CHAIN)
            r = Req(uid=i, input_ids=[5, 7, 9], sampling_params=sp, generator=make_generator(sp, device))
            r.output_ids = [7, 7, 11, 300 + i]
            if sp.regex:
                r.grammar = compiler.compile("regex", sp.regex)
            out.append(r)
        return out

    cpu_reqs, cuda_reqs = reqs("cpu"), reqs("cuda")
    sampler = Sampler()
    a = sampler.process_fn(logits, cpu_reqs)
    b = sampler.process_fn(logits.cuda(), cuda_reqs)
    assert torch.allclose(a, b.cpu(), atol=1e-5)  # -inf where masked, on both
    ta, tb = sampler.sample(logits, cpu_reqs), sampler.sample(logits.cuda(), cuda_reqs).cpu()
    assert torch.equal(ta[:5], tb[:5])  # every greedy row (row 5 samples)
    allowed = torch.isfinite(a[5])
    for _ in range(20):
        assert bool(allowed[int(sampler.sample(logits.cuda(), cuda_reqs)[5])])


@gpu
@needs_cuda
def test_graph_decode_with_the_chain_and_logprobs_matches_eager(tiny_qwen3_dir):
    eager = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer")
    graph = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=16, attention_backend="flashinfer")
    ps = prompts(6, 5, 60, seed=4)
    runs = []
    for sched in (eager, graph):
        base = 1000 * (sched.batch_count + 1)
        for i, p in enumerate(ps):
            sp = SamplingParams(max_tokens=20, ignore_eos=True, logprobs=i % 2 == 0, top_logprobs=3, **CHAIN)
            sched.add_request(base + i, p, sp)
        sched.run_until_idle(overlap=True)
        msgs = [m for m in sched.io.drain() if m.next_token >= 0]
        runs.append(([(m.uid - base, m.next_token) for m in msgs], [m.logprob for m in msgs if m.logprob is not None]))
        assert_all_pages_back(sched)
    (tokens_a, lp_a), (tokens_b, lp_b) = runs
    assert tokens_a == tokens_b and len(lp_a) == 3 * 20
    assert lp_b == pytest.approx(lp_a, abs=0.05)


@pytest.fixture(scope="module")
def tiny_qwen3_tokenizer_dir(tmp_path_factory, tokenizer_dir) -> str:
    """Qwen3-0.6B's attention shape (what FlashInfer and the graphs are tuned for) with the default
    model's vocabulary and tokenizer: what a grammar needs."""
    from conftest import _save_random_model
    from transformers import AutoTokenizer

    from minisgl_edu.models.testing import tiny_hf_config

    cfg = tiny_hf_config(
        "qwen3",
        vocab_size=49152,
        hidden_size=256,
        intermediate_size=512,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
    )
    out = _save_random_model(cfg, tmp_path_factory.mktemp("tiny-qwen3-tok"))
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(out)
    return out


@gpu
@needs_cuda
def test_grammar_and_n_on_the_gpu_engine(tiny_qwen3_tokenizer_dir):
    import re

    from minisgl_edu.scheduler import Scheduler, SchedulerConfig

    sched = Scheduler(SchedulerConfig(model=tiny_qwen3_tokenizer_dir, device="cuda", num_pages=512, page_size=16))
    p = [100 + 13 * i for i in range(40)]
    sp = SamplingParams(max_tokens=30, regex="(yes|no), [0-9]{3}", n=3)
    reqs = [sched.add_request(0, p, sp)] + [sched.add_request(u, p, sp, prompt_leader=0) for u in (1, 2)]
    sched.run_until_idle(overlap=True)
    texts = {sched.tokenizer.decode(r.output_ids, skip_special_tokens=True) for r in reqs}
    assert len(texts) == 1 and re.fullmatch(r"(yes|no), [0-9]{3}", texts.pop())
    assert [r.prefix_len for r in reqs] == [0, 32, 32]
    assert_all_pages_back(sched)
