"""The Triton kernels' switch (`MINISGL_EDU_TRITON`) and the promise that CPU never touches them.

The kernels themselves are tested on CUDA in tests/test_gpu.py; these run everywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHECK = "import json, minisgl_edu.kernels as k; print(json.dumps(sorted(k.ENABLED)))"


@pytest.mark.parametrize("value,want", [(None, ["attn", "fold", "gemm", "gemv", "greedy", "rope"]), ("0", []), ("", []), ("rope", ["rope"]),
                                        ("gemm, rope", ["gemm", "rope"])])
def test_environment_picks_the_kernels(value, want):
    env = dict(os.environ)
    env.pop("MINISGL_EDU_TRITON", None)
    if value is not None:
        env["MINISGL_EDU_TRITON"] = value
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == want


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
                      "minisgl_edu.kernels.pdl")
          if m in sys.modules]
print(json.dumps({{"tokens": [len(o.token_ids) for o in out], "loaded": loaded}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res == {"tokens": [4, 4], "loaded": []}
