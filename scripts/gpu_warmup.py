"""JIT-compile one family of FlashInfer kernels (prefill | decode | sampling) on a fresh GPU machine.

FlashInfer builds each kernel module the first time it is used (~10-90 s each) and caches it;
running the three families in parallel processes overlaps their compilations.
    python scripts/gpu_warmup.py prefill & python scripts/gpu_warmup.py decode & ...; wait
"""

import sys
import time

import torch

what = sys.argv[1]
t0 = time.perf_counter()
dev, dt = "cuda", torch.bfloat16
if what == "sampling":
    import flashinfer.sampling as fs

    logits = torch.randn(2, 1000, device=dev)
    fs.top_k_top_p_sampling_from_logits(
        logits, torch.tensor([5, 5], dtype=torch.int32, device=dev), torch.tensor([0.9, 0.9], device=dev),
        seed=torch.tensor([1, 2], device=dev), offset=torch.tensor([0, 0], device=dev),
    )
else:
    from minisgl_edu.attention.base import AttentionMetadata
    from minisgl_edu.attention.flashinfer_backend import FlashInferBackend
    from minisgl_edu.kvcache.page_table import PageTable
    from minisgl_edu.kvcache.pool import KVPool

    pool = KVPool(1, 8, 16, 8, 128, dt, dev)  # Qwen3-0.6B's attention shape
    table = PageTable(2, 4, dev, fill=pool.dummy_page)
    row = table.alloc_row()
    table.append(row, [0, 1])
    fi = FlashInferBackend(pool, table, num_qo_heads=16)
    q_len = 20 if what == "prefill" else 1
    meta = AttentionMetadata(what == "prefill", [q_len], [20], torch.tensor([row], device=dev),
                             torch.arange(20 - q_len, 20, device=dev))
    fi.prepare(meta)
    fi.forward(0, torch.randn(q_len, 16, 128, device=dev, dtype=dt), torch.randn(q_len, 8, 128, device=dev, dtype=dt),
               torch.randn(q_len, 8, 128, device=dev, dtype=dt))
torch.cuda.synchronize()
print(f"warm-up {what}: {time.perf_counter() - t0:.1f} s")
