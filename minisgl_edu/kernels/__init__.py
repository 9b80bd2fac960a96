"""Triton kernels of our own for the CUDA decode step (imported only on CUDA, never on CPU).

Where this sits on the request path: inside the model's layers and the attention backend, on the
CUDA half-precision path only. A decode step of a small model at small batch is a few hundred tiny
kernels; these remove some of them or make them faster:

* `qk_rope_store`: q/k RMSNorm + RoPE + the K/V write into the paged pool, one launch per layer
  instead of five ("rope");
* `skinny_gemm`: the linear layers of a decode batch of at most 16 tokens, reading the weights
  faster than cuBLAS's kernels do at those shapes ("gemm");
* `gemv`: the linear layers of a batch of one token (decode at batch 1), each program loading its
  rows of W before the previous kernel has finished ("gemv"); with "fold", the layer's two
  RMSNorms and its SwiGLU activation also run inside those matmuls;
* `decode_attention`: split-KV decode attention for decode batches of at most 4 requests, the
  `triton` attention backend (`attention/triton_backend.py`);
* `greedy`: the end of the small decode graphs, float32 logits, argmax and the token written back
  for the next step, in one kernel instead of three ("greedy").

On Hopper and newer all of them are launched with programmatic dependent launch (`pdl.py`).

Which ones run is chosen once, when the engine is built: `EngineConfig.triton_kernels` names the
layer kernels (`models/cuda_layers.py` swaps in the layers that call them) and
`EngineConfig.attention_backend` the attention.
"""

import functools
import importlib.util


@functools.cache
def triton_available() -> bool:
    """Triton comes with torch's CUDA wheels on Linux; without it the engine uses the other kernels."""
    return importlib.util.find_spec("triton") is not None
