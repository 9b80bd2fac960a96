"""Tensor parallelism: one model split across several processes ("ranks").

Where this sits on the request path: inside the scheduler. With `--tp N` the server starts N
scheduler processes `minisgl-TP{i}-scheduler`. Every rank runs the same batches (rank 0 passes
each message it receives on to the others, `scheduler/io/tp_io.py`) but holds only 1/N of each
weight matrix and 1/N of the attention heads' KV cache; the layers in `linear.py` exchange partial
results with `torch.distributed` (`parallel_state.py`) so that every rank ends a forward pass with
the same full logits, and so samples the same tokens.

This package is the layer level only: `models/` builds on it, and it imports nothing above it.
The processes of the ranks are started by `server/launch.py` (the server) and `server/tp_ranks.py`
(the same without HTTP, for tests).

With one rank (the default) nothing here communicates: every helper is a no-op and the layers
compute exactly what plain `Linear` and `Embedding` compute.
"""

from minisgl_edu.distributed.parallel_state import (
    all_gather_last_dim,
    all_reduce,
    check_tp_size,
    destroy,
    get_tp_group,
    get_tp_rank,
    get_tp_size,
    init_tp,
    shard_range,
)

__all__ = [
    "all_gather_last_dim",
    "all_reduce",
    "check_tp_size",
    "destroy",
    "get_tp_group",
    "get_tp_rank",
    "get_tp_size",
    "init_tp",
    "shard_range",
]
