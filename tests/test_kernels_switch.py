"""Where the CUDA kernels are chosen (`EngineConfig`, `minisgl_edu.env`) and the promise that CPU never touches them.

The kernels themselves are tested on CUDA in tests/test_gpu_kernels.py (and under Triton's interpreter,
tests/test_kernels_interpreter.py); these run everywhere.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from minisgl_edu import env
from minisgl_edu.engine.config import TRITON_KERNELS, EngineConfig


@pytest.mark.parametrize(
    "value,want",
    [
        ("rope,gemm,gemv,fold,greedy", TRITON_KERNELS),
        ("0", ()),
        ("", ()),
        ("rope", ("rope",)),
        ("gemm, rope", ("gemm", "rope")),
    ],
)
def test_config_names_the_triton_kernels(value, want):
    assert EngineConfig().triton_kernels == TRITON_KERNELS
    assert EngineConfig(triton_kernels=value).triton_kernels == want


def test_unknown_triton_kernel_is_an_error():
    with pytest.raises(ValueError, match="rope_attn"):
        EngineConfig(triton_kernels="rope,rope_attn")


@pytest.mark.parametrize("value,want", [(None, True), ("1", True), ("0", False), ("off", False)])
def test_env_registry_reads_pdl_once(monkeypatch, value, want):
    if value is None:
        monkeypatch.delenv("MINISGL_EDU_PDL", raising=False)
    else:
        monkeypatch.setenv("MINISGL_EDU_PDL", value)
    env.reset()
    try:
        assert env.get().pdl is want
        monkeypatch.setenv("MINISGL_EDU_PDL", "1" if not want else "0")
        assert env.get().pdl is want  # read once: a later change is not seen
    finally:
        env.reset()


def test_env_registry_rejects_a_bad_value(monkeypatch):
    monkeypatch.setenv("MINISGL_EDU_PDL", "maybe")
    env.reset()
    try:
        with pytest.raises(ValueError, match="MINISGL_EDU_PDL"):
            env.get()
    finally:
        env.reset()


def test_cpu_forward_never_loads_the_triton_kernels(tmp_path):
    """A whole CPU generation (prefill and decode at batch <= 16) imports none of our kernel modules."""
    code = f"""
import sys, json
import torch
from minisgl_edu.models.testing import tiny_hf_config
from transformers import Qwen3ForCausalLM
torch.manual_seed(0)
Qwen3ForCausalLM(tiny_hf_config("qwen3")).save_pretrained({str(tmp_path)!r})
from minisgl_edu import LLM, SamplingParams
out = LLM({str(tmp_path)!r}, device="cpu").generate([[5, 6, 7], [8, 9]], SamplingParams(max_tokens=4, ignore_eos=True))
# Our kernel modules only: torch itself imports Triton when it is installed (torch._dynamo
# looks for it), and the set-up installs it on CPU too, for tests/test_kernels_interpreter.py.
loaded = [m for m in ("minisgl_edu.kernels.skinny_gemm", "minisgl_edu.kernels.qk_rope_store",
                      "minisgl_edu.kernels.gemv", "minisgl_edu.kernels.decode_attention",
                      "minisgl_edu.kernels.pdl", "minisgl_edu.kernels.greedy", "minisgl_edu.models.cuda_layers",
                      "minisgl_edu.attention.triton_backend")
          if m in sys.modules]
print(json.dumps({{"tokens": [len(o.token_ids) for o in out], "loaded": loaded}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res == {"tokens": [4, 4], "loaded": []}
