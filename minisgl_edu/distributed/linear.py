"""Layers split across the tensor-parallel ranks: column- and row-parallel linear, vocabulary-parallel
embedding and LM head.

Where this sits on the request path: inside every forward pass of `Engine.forward_batch`; the
decoder layers (`models/layers.py`) are built from these. How a decoder layer is split (Megatron-LM's
scheme, which SGLang and vLLM follow):

    x (full, same on every rank)
    ├─ qkv_proj      column-parallel: rank r computes its own heads' q, k, v   (no communication)
    ├─ attention     on those heads only, with this rank's slice of the KV cache
    └─ o_proj        row-parallel: rank r multiplies its heads' outputs by its columns of W_o,
                     giving a partial sum of the output; all_reduce adds the partial sums
    the MLP the same way: gate_up_proj column-parallel, down_proj row-parallel + all_reduce

So a layer costs two all-reduces of a [T, hidden] tensor, and every matrix is 1/N of its size.
The vocabulary is split by rows: the embedding looks up only the ids in its shard (zeros for the
others) and all-reduces; the LM head scores only its shard and all-gathers the full logits.

Each split parameter carries `tp_dim`, the dimension along which it is split, so that
`CausalLM.load_weights` can cut this rank's slice out of the full checkpoint tensor. With one rank
every layer here is exactly the plain layer it replaces (same shapes, same calls, same numbers).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from minisgl_edu.distributed.parallel_state import (
    all_gather_last_dim,
    all_reduce,
    get_tp_rank,
    get_tp_size,
    shard_range,
)


def _param(*shape: int, tp_dim: int | None) -> nn.Parameter:
    # No random initialisation: the weights come from a checkpoint (or `init_random_weights`).
    p = nn.Parameter(torch.empty(*shape))
    p.tp_dim = tp_dim  # which dimension `load_weights` slices per rank (None: a full copy)
    return p


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """The plain matmul every parallel layer runs. On CUDA, small decode batches go to our Triton
    matmuls instead: `models/cuda_layers.py` swaps those layers in when the model is built."""
    return F.linear(x, weight, bias)


class ColumnParallelLinear(nn.Module):
    """y = x W^T (+ b) where each rank holds `out_features / tp` rows of W (output columns of y).

    The input is the full x on every rank; the output is this rank's part of y, e.g. its own
    attention heads. No communication.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = False) -> None:
        super().__init__()
        self.out_features = out_features // get_tp_size()
        self.weight = _param(self.out_features, in_features, tp_dim=0)
        self.bias = _param(self.out_features, tp_dim=0) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """y = x W^T (+ b) where each rank holds `in_features / tp` columns of W, and x's matching part.

    Each rank's product is a partial sum of the full y; `all_reduce` adds them so every rank ends
    with the full y. The bias is added once, after the sum (added on every rank before it, it
    would count tp times).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = False) -> None:
        super().__init__()
        self.tp_size = get_tp_size()
        self.weight = _param(out_features, in_features // self.tp_size, tp_dim=1)
        self.bias = _param(out_features, tp_dim=None) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.tp_size == 1:
            return linear(x, self.weight, self.bias)
        y = all_reduce(linear(x, self.weight))
        return y if self.bias is None else y + self.bias


class VocabParallelEmbedding(nn.Module):
    """Token id -> its row of the [vocab, hidden] matrix, each rank holding a contiguous shard of rows.

    A rank looks up the ids in its shard and writes zeros for the others; after `all_reduce`,
    exactly one rank contributed each token's row. When tp does not divide the vocabulary, the
    last shard is padded with zero rows (never looked up, trimmed off the logits).
    """

    def __init__(self, vocab_size: int, hidden_size: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.tp_size = get_tp_size()
        self.vocab_start, rows, self.num_real = shard_range(vocab_size, get_tp_rank(), self.tp_size)
        self.weight = _param(rows, hidden_size, tp_dim=0)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.tp_size == 1:
            return F.embedding(input_ids, self.weight)
        local = input_ids - self.vocab_start
        outside = (local < 0) | (local >= self.num_real)
        out = F.embedding(local.masked_fill(outside, 0), self.weight)
        out.masked_fill_(outside.unsqueeze(-1), 0.0)
        return all_reduce(out)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[N, hidden] -> [N, vocab]: the same matrix used as the output projection (all ranks get all)."""
        logits = self.shard_logits(hidden)
        if self.tp_size == 1:
            return logits
        return all_gather_last_dim(logits)[..., : self.vocab_size]

    def shard_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[N, hidden] -> the scores of this rank's vocabulary rows (all of them with one rank)."""
        return F.linear(hidden, self.weight)


class ParallelLMHead(VocabParallelEmbedding):
    """The output projection of a model with untied embeddings: [vocab, hidden], split by vocabulary rows.

    Only `compute_logits` is used; the layout and the split are those of the embedding.
    """
