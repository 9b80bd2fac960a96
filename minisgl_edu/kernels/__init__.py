"""Triton kernels of our own for the CUDA decode step (imported only on CUDA, never on CPU).

Where this sits on the request path: inside the model's layers, on the CUDA half-precision path
only. A decode step of a small model at small batch is a few hundred tiny kernels; these remove
some of them or make them faster:

* `qk_rope_store`: q/k RMSNorm + RoPE + the K/V write into the paged pool, one launch per layer
  instead of five;
* `skinny_gemm`: the linear layers of a decode batch of at most 16 tokens, reading the weights
  faster than cuBLAS's kernels do at those shapes;
* `gemv`: the linear layers of a batch of one token (decode at batch 1), each program loading its
  rows of W before the previous kernel has finished ("gemv"); with "fold", the layer's two
  RMSNorms and its SwiGLU activation also run inside those matmuls;
* `decode_attention`: split-KV decode attention for the CUDA graphs of at most 4 requests, in
  place of FlashInfer's, which also spares the host FlashInfer's plan per step ("attn"); with
  "rope_attn" the q/k norm, RoPE and K/V write of those steps run inside it: one kernel;
* `greedy`: the end of those graphs, float32 logits, argmax and the token written back for the
  next step, in one kernel instead of three ("greedy").

On Hopper and newer all of them are launched with programmatic dependent launch (`pdl.py`).

`MINISGL_EDU_TRITON` picks them: "rope,gemm,gemv,fold,attn,greedy" (the default), any subset, plus
"rope_attn", off by default because it measured no faster ("gemv" needs "gemm", "fold" needs
"gemv", "rope_attn" needs "rope" and "attn", "greedy" needs "attn"), or "0" for none (then FlashInfer's kernels and cuBLAS run);
what each is worth is in docs/benchmarks.md.
"""

import functools
import importlib.util
import os

_CHOICE = os.environ.get("MINISGL_EDU_TRITON", "rope,gemm,gemv,fold,attn,greedy")
ENABLED: set[str] = set() if _CHOICE.strip() in ("", "0") else {s.strip() for s in _CHOICE.split(",")}


@functools.cache
def triton_available() -> bool:
    """Triton comes with torch's CUDA wheels on Linux; without it the engine uses the other kernels."""
    return importlib.util.find_spec("triton") is not None


def enabled(name: str) -> bool:
    """Use our Triton kernel `name` ("rope", "gemm", ..., "rope_attn")? Asked only on the CUDA path."""
    return name in ENABLED and triton_available()
