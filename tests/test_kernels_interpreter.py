"""Our Triton kernels, checked on CPU: the `kernel` tests of tests/test_gpu_kernels.py under Triton's interpreter.

The kernels (`minisgl_edu/kernels/`) only ever run on CUDA, and CI has no GPU. Triton can run
a kernel on the CPU instead (`TRITON_INTERPRET=1`: every program executed with numpy, slowly),
so the same tests that compare each kernel with a reference on the H200 also run here, in
float16, each against its float32 reference: the skinny GEMM, the one-row GEMV with its folded
prologues, q/k norm + RoPE + K/V store, and the split-KV decode attention (all but the widest
matmul shape, `MATMUL_SHAPES` in tests/test_gpu_kernels.py, which only the GPU runs). What the interpreter
cannot check is speed, programmatic dependent launch (off under it) and races between programs.

The variable must be set before Triton compiles anything, so the tests run in a child pytest.
The set-up (Makefile) installs Triton on CPU machines; without it these tests skip.

The interpreter does not type-check a kernel as the compiler does, so a kernel that runs there
can still fail to compile for a GPU. The last test builds the fused q/k RoPE + K/V store kernel's
IR for an H100/H200 (sm_90) without a GPU, with bf16 and with FP8 pages.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
def test_kernel_tests_pass_under_the_interpreter():
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "kernel", "tests/test_gpu_kernels.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    tail = out.stdout[-3000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
    # All of them ran: a skip (say, the variable not reaching the child) would otherwise pass
    # silently; a marker matching nothing fails above (pytest's "no tests ran", exit code 5).
    summary = out.stdout.strip().splitlines()[-1]
    assert "skipped" not in summary and "passed" in summary, summary


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
@pytest.mark.parametrize("fp8", [False, True])
@pytest.mark.parametrize("norm", [False, True])
def test_qk_rope_store_compiles_for_sm90(fp8, norm):
    """Triton gives a name set in both branches of a runtime `if` one type: with FP8 pages a
    pointer to the q output (bf16) and one into the K pool (e4m3) under one name fail here, as
    they failed on the H200."""
    from triton._C import libtriton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler import ASTSource

    from minisgl_edu.kernels.qk_rope_store import _qk_rope_store_kernel

    pool = "*fp8e4nv" if fp8 else "*bf16"
    pointers = dict(qkv_ptr="*bf16", pos_ptr="*i64", cos_sin_ptr="*fp32", qw_ptr="*bf16", kw_ptr="*bf16")
    pointers.update(loc_ptr="*i64", q_out_ptr="*bf16", k_pool_ptr=pool, v_pool_ptr=pool, ks_ptr="*fp32", vs_ptr="*fp32")
    ints = {
        name: "i32" for name in ("num_tokens", "stride_qkv", "stride_cs", "stride_qo", "stride_pool", "stride_scale")
    }
    consts = dict(NUM_Q=16, NUM_KV=8, HEAD_DIM=128, HAS_NORM=norm, FP8=fp8, BLOCK_T=8, USE_PDL=False)
    signature = {**pointers, **ints, "eps": "fp32", **{name: "constexpr" for name in consts}}
    target = GPUTarget("cuda", 90, 32)
    backend = CUDABackend(target)
    options = backend.parse_options({})
    context = libtriton.ir.context()
    libtriton.ir.load_dialects(context)
    backend.load_dialects(context)
    source = ASTSource(_qk_rope_store_kernel, signature, consts)
    module = source.make_ir(
        target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context
    )
    assert "tt.store" in str(module)
