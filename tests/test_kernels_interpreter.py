"""Our Triton kernels, checked on CPU: the `kernel` tests of tests/test_gpu.py under Triton's interpreter.

The kernels (`minisgl_edu/kernels/`) only ever run on CUDA, and CI has no GPU. Triton can run
a kernel on the CPU instead (`TRITON_INTERPRET=1`: every program executed with numpy, slowly),
so the same tests that compare each kernel with a reference on the H200 also run here, in
float16, each against its float32 reference: the skinny GEMM, the one-row GEMV with its folded
prologues, q/k norm + RoPE + K/V store, and the split-KV decode attention. What the interpreter
cannot check is speed, programmatic dependent launch (off under it) and races between programs.

The variable must be set before Triton compiles anything, so the tests run in a child pytest.
The set-up (Makefile) installs Triton on CPU machines; without it this test skips.
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
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "kernel", "tests/test_gpu.py"],
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
