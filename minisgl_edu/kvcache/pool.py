"""The paged KV pool: where every layer's keys and values live.

Where this sits on the request path: the engine's attention layers write the K/V of each new
token into a *slot* of this pool (`store`) and read back the slots of all earlier tokens
(`load_pages`, or a kernel that reads the buffers in place). Slots are grouped into pages of
`page_size` tokens; a request owns whole pages (see `allocator.py`) and the page table (see
`page_table.py`) says which pages, in order.

The pages hold the model's dtype (`kv_cache_dtype="auto"`), or FP8 (`"fp8_e4m3"`, the name SGLang
and vLLM use): one byte per number instead of two (bfloat16) or four (float32). Decode reads every
cached K/V byte of every running request at every step, so the bytes per token are what a decode
step costs at large batch and long context, and what bounds how many tokens the memory holds.

FP8 e4m3 has 3 mantissa bits and a largest value of 448, so each stored vector carries a scale:
one float32 per token and KV head, for K and for V (`k_scale`, `v_scale`, [layers, slots, Hkv]):

    stored = fp8(x / s),  s = max|x| / 448,  x ~= stored * s

Why per token and head, not per page: a token's K/V are written once, when the token is computed,
and never again. A per-page scale would have to be fixed before the page's later tokens are known
(a larger one later would force rewriting the page); a per-token scale is known at the write and
never changes. It costs 4 bytes per head vector (3% of a 128-number head in FP8), and it follows
each token's own size: keys of different tokens differ in size by 10x and more.
"""

from __future__ import annotations

from typing import Optional

import torch

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0  # the largest finite e4m3 value; casting anything larger gives NaN, not 448
# `kv_cache_dtype` names (SGLang's and vLLM's flag values) -> what the pages store; None: the model's dtype
KV_CACHE_DTYPES: dict[str, torch.dtype | None] = {"auto": None, "fp8_e4m3": FP8}


def quantize_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [..., D] -> (FP8 values [..., D], float32 scales [...]): one scale per vector of D numbers,
    its largest magnitude mapped to 448. An all-zero vector gets a tiny scale and stays zero."""
    x = x.float()
    scale = (x.abs().amax(dim=-1) / FP8_MAX).clamp(min=1e-12)
    # The clamp only guards the rounding of max|x| / s: past 448 the cast would give NaN.
    values = (x / scale[..., None]).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return values, scale


def dequantize_fp8(values: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The inverse of `quantize_fp8`, in `dtype`: values [..., D] * scale [...]."""
    return values.to(dtype) * scale[..., None].to(dtype)


class KVPool:
    """K and V buffers of shape [num_layers, num_slots, num_kv_heads, head_dim].

    slot = page * page_size + offset. One extra page at the end (`dummy_page`) belongs to no one:
    padded entries of a batch (CUDA-graph padding, masked positions) point at it, so they never
    touch a request's data.

    `dtype` is what attention computes in (the model's dtype); `kv_dtype` what the buffers store
    (the same by default, or `FP8`, with `k_scale` and `v_scale` beside them).
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
        kv_dtype: torch.dtype | None = None,
    ) -> None:
        self.num_layers = num_layers
        self.num_pages = num_pages
        self.page_size = page_size
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.dummy_page = num_pages
        self.dtype = dtype
        self.kv_dtype = kv_dtype or dtype
        self.quantized = self.kv_dtype == FP8
        num_slots = (num_pages + 1) * page_size
        shape = (num_layers, num_slots, num_kv_heads, head_dim)
        self.k = torch.zeros(shape, dtype=self.kv_dtype, device=device)
        self.v = torch.zeros(shape, dtype=self.kv_dtype, device=device)
        self.k_scale = self.v_scale = None
        if self.quantized:
            self.k_scale = torch.ones(shape[:3], dtype=torch.float32, device=device)
            self.v_scale = torch.ones(shape[:3], dtype=torch.float32, device=device)

    @staticmethod
    def bytes_per_token(num_layers: int, num_kv_heads: int, head_dim: int, kv_dtype: torch.dtype) -> int:
        """K and V of one token in every layer, scales included: what one more token of context
        costs in memory, and what decode reads for it at every step."""
        itemsize = torch.empty((), dtype=kv_dtype).element_size()
        scale = 4 if kv_dtype == FP8 else 0  # float32 per head vector
        return 2 * num_layers * num_kv_heads * (head_dim * itemsize + scale)

    @property
    def nbytes(self) -> int:
        scales = 0 if self.k_scale is None else 2 * self.k_scale.numel() * 4
        return self.k.numel() * self.k.element_size() * 2 + scales

    def store(self, layer_id: int, loc: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Write the K/V of new tokens (shape [T, H, D]) into slots `loc` (shape [T])."""
        if self.quantized:
            for values, scales, x in ((self.k, self.k_scale, k), (self.v, self.v_scale, v)):
                q, s = quantize_fp8(x)
                # As bytes: torch's CPU index_copy_ and index_select have no float8 kernels.
                values[layer_id].view(torch.uint8).index_copy_(0, loc, q.view(torch.uint8))
                scales[layer_id].index_copy_(0, loc, s)
            return
        self.k[layer_id].index_copy_(0, loc, k.to(self.k.dtype))
        self.v[layer_id].index_copy_(0, loc, v.to(self.v.dtype))

    def load_pages(
        self, layer_id: int, pages: torch.Tensor, dtype: Optional[torch.dtype] = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """pages [B, n] -> K and V [B, n * page_size, Hkv, D] in `dtype`: each row's pages, in order,
        FP8 dequantized. The reference read; the GPU kernels read the buffers in place. FP8 pages
        are dequantized into `dtype` when given (a test's float32 reference), else the pool's."""
        k = self._gather(self.k[layer_id], pages)
        v = self._gather(self.v[layer_id], pages)
        if not self.quantized:
            return k, v
        ks = self._gather(self.k_scale[layer_id], pages)
        vs = self._gather(self.v_scale[layer_id], pages)
        dtype = dtype or self.dtype
        return dequantize_fp8(k, ks, dtype), dequantize_fp8(v, vs, dtype)

    def _gather(self, buf: torch.Tensor, pages: torch.Tensor) -> torch.Tensor:
        # Gathering pages (page_size rows at a time) is much cheaper than gathering every slot.
        b, n = pages.shape
        raw = buf.view(torch.uint8) if buf.dtype == FP8 else buf  # see `store`
        paged = raw.view(-1, self.page_size, *buf.shape[1:])  # [num_pages + 1, page_size, ...]
        out = paged.index_select(0, pages.reshape(-1)).view(b, n * self.page_size, *buf.shape[1:])
        return out.view(buf.dtype)

    def describe(self) -> str:
        """The pool in words, for the server's ready line: tokens, bytes per token and, for FP8,
        how many more tokens than the model's dtype the same memory holds."""
        tokens = self.num_pages * self.page_size
        per_token = self.bytes_per_token(self.num_layers, self.num_kv_heads, self.head_dim, self.kv_dtype)
        name = str(self.kv_dtype).removeprefix("torch.")
        text = f"KV cache {tokens:,} tokens of {name} ({per_token:,} bytes/token"
        if self.quantized:
            plain = self.bytes_per_token(self.num_layers, self.num_kv_heads, self.head_dim, self.dtype)
            text += f", {plain / per_token:.2f}x the tokens of {str(self.dtype).removeprefix('torch.')} per byte"
        return text + ")"
