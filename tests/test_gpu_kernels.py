"""Our Triton kernels (`minisgl_edu/kernels/`), each against a reference: the skinny GEMM, the
one-row GEMV with the step before the matmul folded in, q/k norm + RoPE + K/V store (into bf16 and
FP8 pages), split-KV decode attention (bf16 and FP8 pages), the greedy head at the end of a graph,
and the CUDA layers with all of them in one model on the hybrid backend.

Every test here is marked `kernel`: run them on the GPU machine with
`pytest -q tests/test_gpu_kernels.py`. CI has no GPU, so tests/test_kernels_interpreter.py runs the
same tests on CPU under Triton's interpreter (TRITON_INTERPRET=1), in float16 (the interpreter's
bfloat16 arithmetic is not trustworthy). A kernel is held to what torch gets in the same half
precision against float32, so a wrong index, mask or scale shows and ordinary rounding does not.
"""

from __future__ import annotations

import os

import pytest
import torch
from gpu_support import (
    HAS_CUDA,
    HKV,
    HQ,
    D,
    assert_all_pages_back,
    generate,
    gpu,
    make_scheduler,
    paged_logits,
    prompts,
    rel_err,
)

# Under Triton's interpreter: the CPU and float16; on the GPU machine: CUDA and bfloat16.
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
KDEV, KDT = ("cpu", torch.float16) if INTERPRET else ("cuda", torch.bfloat16)
needs_kernels = pytest.mark.skipif(not (HAS_CUDA or INTERPRET), reason="needs CUDA or Triton's interpreter")
# The matmul shapes: Qwen3-0.6B's (n, k) of the q/k/v, the MLP's down projection, and a small one
# whose n is no multiple of a tile. The interpreter runs a kernel's programs one after another in
# numpy, so there the widest, 4096 (15 s of the CPU run, and no path the other two do not take),
# is left to the GPU.
MATMUL_SHAPES = ([] if INTERPRET else [(4096, 1024)]) + [(1024, 3072), (200, 576)]


# ---------------------------------------------------------------------- matmuls
@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("m", [1, 5, 16])
@pytest.mark.parametrize("n,k,bias", [(n, k, k == 3072) for n, k in MATMUL_SHAPES])
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
        assert rel_err(got, want) < max(5e-3, 1.5 * rel_err(ref, want))


@gpu
@pytest.mark.kernel
@needs_kernels
@pytest.mark.parametrize("n,k", MATMUL_SHAPES)
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
        assert rel_err(y, want) < max(5e-3, 1.5 * rel_err(ref, want)), name
        assert (new_residual is None) == (name != "add_norm")
    assert torch.equal(cases["add_norm"][0][1], x + r)


# ---------------------------------------------------------------------- q/k norm + RoPE + K/V store
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
    print(f"qk_rope_store: q {rel_err(q, rq):.1e}, k {rel_err(k_pool[loc], rk):.1e}, v {rel_err(v_pool[loc], rv):.1e}")
    assert rel_err(q, rq) < 5e-3 and rel_err(k_pool[loc], rk) < 5e-3
    assert torch.equal(v_pool[loc], rv.to(KDT))
    others = torch.ones(slots, dtype=torch.bool, device=KDEV)
    others[loc] = False
    assert not k_pool[others].any() and not v_pool[others].any()


# ---------------------------------------------------------------------- the CUDA layers in one model
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
    want = paged_logits(ref_model, cfg, ps)
    plain = paged_logits(model, cfg, ps)
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
    got = paged_logits(model, cfg, ps, "torch,triton" if INTERPRET else "flashinfer,triton")
    # 2 layers: 1 prefill + 4 decode steps through the rope kernel, the 4 decode steps through Triton
    assert calls == {"decode": 4 * cfg.num_layers, "rope": 5 * cfg.num_layers}
    err, err_plain = rel_err(got, want), rel_err(plain, want)
    print(f"CUDA layers, hybrid backend, batch {n}: relative error vs float32 {err:.2e} (plain: {err_plain:.2e})")
    assert err < max(1e-2, 1.5 * err_plain)
    cuda_layers.use_plain_layers(model)  # back to the plain model: its logits again (bit for bit on the CPU)
    again = paged_logits(model, cfg, ps)
    assert torch.equal(again, plain) if INTERPRET else rel_err(again, plain) < 1e-3


# ---------------------------------------------------------------------- decode attention
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
        assert rel_err(got[b], want) < 1e-2, (n, rel_err(got[b], want))


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
            assert rel_err(got[b], want) < 1e-2, (n, rel_err(got[b], want))


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


# ---------------------------------------------------------------------- RoPE + K/V store into FP8 pages
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
    assert rel_err(q, rq) < 5e-3
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


# ---------------------------------------------------------------------- the greedy head
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
