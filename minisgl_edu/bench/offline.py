"""Offline throughput: the engine against `transformers.generate` on the same prompts.

    python -m minisgl_edu.bench.offline                 # CPU preset: default model, 16 requests
    python -m minisgl_edu.bench.offline --preset qwen3-0.6b   # GPU preset (random bf16 weights)

Workload (as mini-sglang's offline benchmark): random token-id prompts, input and output lengths
uniform in [min_len, max_len], greedy, `ignore_eos`, so every request produces exactly its output
length. `transformers` runs the same prompts as one left-padded batch for max(output lengths)
steps; both throughputs count the same useful tokens (sum of the requested output lengths).

On CUDA the engine runs with FlashInfer attention (our Triton decode kernel for a few requests),
CUDA graphs, overlap scheduling and the CUDA layer variants; switch each off to see what it
contributes: `--attention-backend torch` (or `flashinfer`), `--no-cuda-graph`, `--no-overlap`,
`--triton-kernels 0`, `--no-fused-kernels`, `--no-decode-tensor-cores` (the `EngineConfig`
fields of the same names). `--batch1-tokens N` also times one request alone (decode speed at
batch 1).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

import torch

PRESETS = {
    # name: (model, num_requests, min_len, max_len, device)
    "cpu": ("smollm2-135m", 16, 32, 256, "cpu"),
    "qwen3-0.6b": ("qwen3-0.6b-random", 256, 100, 1024, "cuda"),
}

# Qwen3-0.6B's public config.json (architecture only): weights are random, since no weights
# can be downloaded on the benchmark machine, and throughput does not depend on their values.
QWEN3_06B_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "vocab_size": 151936,
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 40960,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
    "attention_bias": False,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "torch_dtype": "bfloat16",
}


@dataclass
class Workload:
    prompts: list[list[int]]
    output_lens: list[int]

    @property
    def output_tokens(self) -> int:
        return sum(self.output_lens)


def make_workload(n: int, lo: int, hi: int, vocab: int, seed: int = 0) -> Workload:
    rng = random.Random(seed)
    prompts = [[rng.randrange(100, vocab - 100) for _ in range(rng.randint(lo, hi))] for _ in range(n)]
    return Workload(prompts, [rng.randint(lo, hi) for _ in range(n)])


def random_qwen3_dir(vocab_from: Optional[str] = None) -> str:
    """A Qwen3-0.6B-shaped HF directory with random bf16 weights (made once, in a temp dir).

    `vocab_from`: a model directory whose vocabulary (size, bos and eos ids, from its config.json)
    replaces Qwen3's, for serving with that model's tokenizer: every sampled id is then a token the
    tokenizer can turn into text, so a stream carries a chunk for it (with Qwen3's 151,936 ids and
    the bundled model's 49,152-token tokenizer, two ids in three would stream nothing).
    """
    from transformers import AutoConfig, AutoModelForCausalLM

    config = dict(QWEN3_06B_CONFIG)
    out = os.path.join(tempfile.gettempdir(), "minisgl_edu-qwen3-0.6b-random")
    if vocab_from is not None:
        with open(os.path.join(vocab_from, "config.json")) as f:
            theirs = json.load(f)
        config.update({k: theirs[k] for k in ("vocab_size", "bos_token_id", "eos_token_id")})
        out += f"-vocab{config['vocab_size']}"
    if not os.path.exists(os.path.join(out, "config.json")):
        cfg = AutoConfig.for_model(**config)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16)
        model.save_pretrained(out)
    return out


class _IdTokenizer:
    """The benchmark feeds token ids and never decodes text (no stop strings, ignore_eos): a
    stand-in, so that a random-weight model directory needs no tokenizer files."""

    eos_token_id = None

    def decode(self, ids, skip_special_tokens=True):
        return ""


def run_engine(
    model: str, wl: Workload, device: str, overlap: bool = False, batch1_tokens: int = 0, **engine_kw
) -> dict:
    """Throughput of our engine on `wl`, driving the Scheduler directly (as the server does).

    `overlap` picks overlap_loop's step over normal_loop's. With `batch1_tokens`, also one request
    alone (128-token prompt, that many output tokens): decode speed at batch size 1.
    """
    import gc

    from minisgl_edu import SamplingParams
    from minisgl_edu.process import frozen_heap
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    t_load = time.perf_counter()
    sched = Scheduler(SchedulerConfig(model=model, device=device, **engine_kw), QueueIO(), tokenizer=_IdTokenizer())
    out = {
        "startup_s": round(time.perf_counter() - t_load, 1),
        "attention": sched.engine.attention_backend,
        "cuda_graph": sched.engine.graph_runner is not None,
        "overlap": overlap,
        "kv_pages": sched.engine.pool.num_pages,
    }

    def run(prompts, params) -> tuple[float, list[list[int]]]:
        base = 10_000_000 * (sched.batch_count + 1)
        _sync(device)
        t0 = time.perf_counter()
        for i, (p, sp) in enumerate(zip(prompts, params)):
            sched.add_request(base + i, p, sp)
        sched.run_until_idle(overlap=overlap)
        _sync(device)
        seconds = time.perf_counter() - t0
        toks: dict[int, list[int]] = {base + i: [] for i in range(len(prompts))}
        for msg in sched.io.drain():
            if msg.next_token >= 0:
                toks[msg.uid].append(msg.next_token)
        return seconds, [toks[base + i] for i in range(len(prompts))]

    # As in the server's scheduler process: the start-up heap out of the collector's way.
    with frozen_heap():
        # Warm-up: a prefill, a few decode steps (JIT kernels, cuBLAS, allocator).
        run([p[:64] for p in wl.prompts[:4]], [SamplingParams(max_tokens=16, ignore_eos=True)] * 4)
        seconds, tokens = run(wl.prompts, [SamplingParams(max_tokens=n, ignore_eos=True) for n in wl.output_lens])
        assert [len(t) for t in tokens] == wl.output_lens
        out.update(engine_s=round(seconds, 2), engine_tok_s=round(wl.output_tokens / seconds, 1))
        if batch1_tokens:
            s1, t1 = run([wl.prompts[0][:128]], [SamplingParams(max_tokens=batch1_tokens, ignore_eos=True)])
            out["batch1_tok_s"] = round(len(t1[0]) / s1, 1)
    out["_tokens"] = tokens
    # Give the GPU memory back (the KV pool takes most of it) before transformers runs.
    sched = None
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return out


def run_transformers(model_dir: str, wl: Workload, device: str, dtype: torch.dtype) -> float:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(device).eval()
    pad = model.config.eos_token_id if isinstance(model.config.eos_token_id, int) else 0
    width = max(len(p) for p in wl.prompts)
    ids = torch.full((len(wl.prompts), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(wl.prompts):  # left padding, as generation needs
        ids[i, width - len(p) :] = torch.tensor(p)
        mask[i, width - len(p) :] = 1
    steps = max(wl.output_lens)
    kw = dict(max_new_tokens=steps, min_new_tokens=steps, do_sample=False, pad_token_id=pad)
    with torch.inference_mode():
        model.generate(
            ids[:2, -8:].to(device),
            attention_mask=mask[:2, -8:].to(device),
            max_new_tokens=4,
            do_sample=False,
            pad_token_id=pad,
        )  # warm-up
        _sync(device)
        t0 = time.perf_counter()
        model.generate(ids.to(device), attention_mask=mask.to(device), **kw)
        _sync(device)
    return time.perf_counter() - t0


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def machine() -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="cpu", choices=sorted(PRESETS))
    ap.add_argument("--num-requests", type=int)
    ap.add_argument("--skip-transformers", action="store_true")
    ap.add_argument(
        "--hf-num-requests",
        type=int,
        default=None,
        help="run transformers on the first N requests only (it is slow); its tok/s is then "
        "compared with ours on the full set",
    )
    ap.add_argument("--page-size", type=int, default=16)
    ap.add_argument(
        "--max-prefill-tokens",
        type=int,
        default=None,
        help="token budget of one prefill batch (default: SchedulerConfig's: 2048 on CPU, 8192 on CUDA)",
    )
    ap.add_argument("--max-running-requests", type=int, default=None)
    ap.add_argument(
        "--attention-backend",
        default="auto",
        help="auto, torch, flashinfer, or prefill,decode such as flashinfer,triton (EngineConfig)",
    )
    ap.add_argument(
        "--triton-kernels",
        default=None,
        help="our Triton layer kernels, e.g. rope,gemm; 0 for none (default: EngineConfig's)",
    )
    ap.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e4m3"], help="what the KV pages store")
    ap.add_argument("--no-fused-kernels", action="store_true", help="plain torch norms, RoPE and activation on CUDA")
    ap.add_argument("--no-decode-tensor-cores", action="store_true", help="FlashInfer's CUDA-core decode kernel")
    ap.add_argument("--cuda-graph-max-bs", type=int, default=256, help="0 disables CUDA graphs")
    ap.add_argument("--no-cuda-graph", action="store_true", help="same as --cuda-graph-max-bs 0")
    ap.add_argument("--no-overlap", action="store_true", help="normal_loop instead of overlap_loop")
    ap.add_argument("--overlap", action="store_true", help="overlap_loop on CPU too")
    ap.add_argument(
        "--batch1-tokens",
        type=int,
        default=None,
        help="also time one request alone, for this many tokens (default: 1024 on CUDA, 0 on CPU)",
    )
    ap.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        help="for both the engine and transformers (default: float32 on CPU, bfloat16 on CUDA)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run engine and transformers alternately this many times and report the medians "
        "(a shared machine drifts by tens of percent between minutes)",
    )
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args(argv)

    model, n, lo, hi, device = PRESETS[args.preset]
    n = args.num_requests or n
    model_path = random_qwen3_dir() if model == "qwen3-0.6b-random" else model
    from minisgl_edu.models import resolve_model

    model_dir = resolve_model(model_path)
    from transformers import AutoConfig

    vocab = AutoConfig.from_pretrained(model_dir).vocab_size
    wl = make_workload(n, lo, hi, vocab)
    engine_kw = dict(
        page_size=args.page_size,
        max_running_requests=args.max_running_requests or max(n, 1),
        attention_backend=args.attention_backend,
        cuda_graph_max_bs=0 if args.no_cuda_graph else args.cuda_graph_max_bs,
        fused_kernels=not args.no_fused_kernels,
        decode_tensor_cores=not args.no_decode_tensor_cores,
        kv_cache_dtype=args.kv_cache_dtype,
    )
    if args.triton_kernels is not None:
        engine_kw["triton_kernels"] = args.triton_kernels
    if args.max_prefill_tokens:
        engine_kw["max_prefill_tokens"] = args.max_prefill_tokens
    if device == "cpu":
        engine_kw["max_total_tokens"] = sum(len(p) for p in wl.prompts) + wl.output_tokens + 1024
    overlap = (device != "cpu" and not args.no_overlap) or args.overlap
    batch1 = args.batch1_tokens if args.batch1_tokens is not None else (1024 if device != "cpu" else 0)
    # float32 on CPU: the engine's CPU default (what the course runs, and what matches transformers
    # token for token); bfloat16 on CUDA.
    dtype = args.dtype or ("float32" if device == "cpu" else "bfloat16")
    engine_kw["dtype"] = dtype
    runs: list[dict] = []
    for _ in range(max(args.repeat, 1)):  # alternate, so that drift hits both sides alike
        eng = run_engine(model_dir, wl, device, overlap=overlap, batch1_tokens=batch1, **engine_kw)
        eng.pop("_tokens")
        if not args.skip_transformers:
            m = args.hf_num_requests or n
            sub = Workload(wl.prompts[:m], wl.output_lens[:m])
            hf_s = run_transformers(model_dir, sub, device, getattr(torch, dtype))
            eng.update(hf_requests=m, hf_s=round(hf_s, 2), hf_tok_s=round(sub.output_tokens / hf_s, 1))
            eng["speedup"] = round(eng["engine_tok_s"] / eng["hf_tok_s"], 2)
        runs.append(eng)
    res = {
        "preset": args.preset,
        "machine": machine(),
        "requests": n,
        "dtype": dtype,
        "input_tokens": sum(len(p) for p in wl.prompts),
        "output_tokens": wl.output_tokens,
        **runs[0],
    }
    if len(runs) > 1:
        # Medians of each side; the ratio of the medians is the headline, each pair's ratio beside it.
        for key in ("engine_s", "engine_tok_s", "batch1_tok_s", "hf_s", "hf_tok_s"):
            if key in runs[0]:
                res[key] = statistics.median(r[key] for r in runs)
        if "hf_tok_s" in res:
            res["speedup"] = round(res["engine_tok_s"] / res["hf_tok_s"], 2)
        res["runs"] = [{k: r[k] for k in ("engine_tok_s", "hf_tok_s", "speedup") if k in r} for r in runs]
        for i, r in enumerate(res["runs"]):
            print(
                f"run {i + 1}: engine {r['engine_tok_s']} tok/s, transformers {r.get('hf_tok_s', '-')} tok/s, "
                f"ratio {r.get('speedup', '-')}"
            )
    print(
        "| preset | machine | dtype | requests | output tokens | attention | graphs | overlap | engine tok/s "
        "| batch-1 tok/s | transformers tok/s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {res['preset']} | {res['machine']} | {dtype} | {n} | {wl.output_tokens} | {res['attention']} | "
        f"{res['cuda_graph']} | {res['overlap']} | {res['engine_tok_s']} | {res.get('batch1_tok_s', '-')} | "
        f"{res.get('hf_tok_s', '-')}{'' if res.get('hf_requests', n) == n else ' (' + str(res['hf_requests']) + ' req)'} "
        f"| {res.get('speedup', '-')} |"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return res


if __name__ == "__main__":
    main()
