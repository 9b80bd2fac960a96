"""The paged KV pool: where every layer's keys and values live.

Where this sits on the request path: the engine's attention layers write the K/V of each new
token into a *slot* of this pool and read back the slots of all earlier tokens. Slots are grouped
into pages of `page_size` tokens; a request owns whole pages (see `allocator.py`) and the page
table (see `page_table.py`) says which pages, in order.
"""

from __future__ import annotations

import torch


class KVPool:
    """K and V buffers of shape [num_layers, num_slots, num_kv_heads, head_dim].

    slot = page * page_size + offset. One extra page at the end (`dummy_page`) belongs to no one:
    padded entries of a batch (CUDA-graph padding, masked positions) point at it, so they never
    touch a request's data.
    """

    def __init__(
        self,
        num_layers: int,
        num_pages: int,
        page_size: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: torch.dtype,
        device: torch.device | str,
    ) -> None:
        self.num_layers = num_layers
        self.num_pages = num_pages
        self.page_size = page_size
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.dummy_page = num_pages
        num_slots = (num_pages + 1) * page_size
        shape = (num_layers, num_slots, num_kv_heads, head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)

    @staticmethod
    def bytes_per_token(num_layers: int, num_kv_heads: int, head_dim: int, dtype: torch.dtype) -> int:
        itemsize = torch.empty((), dtype=dtype).element_size()
        return 2 * num_layers * num_kv_heads * head_dim * itemsize

    @property
    def nbytes(self) -> int:
        return self.k.numel() * self.k.element_size() * 2

    def store(self, layer_id: int, loc: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Write the K/V of new tokens (shape [T, H, D]) into slots `loc` (shape [T])."""
        self.k[layer_id].index_copy_(0, loc, k.to(self.k.dtype))
        self.v[layer_id].index_copy_(0, loc, v.to(self.v.dtype))
