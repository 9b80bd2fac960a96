"""Offline throughput: the engine against `transformers.generate` on the same prompts.

    python -m minisgl_edu.bench.offline                 # CPU preset: default model, 16 requests
    python -m minisgl_edu.bench.offline --preset qwen3-0.6b   # GPU preset (random bf16 weights)

Workload (as mini-sglang's offline benchmark): random token-id prompts, input and output lengths
uniform in [min_len, max_len], greedy, `ignore_eos`, so every request produces exactly its output
length. `transformers` runs the same prompts as one left-padded batch for max(output lengths)
steps; both throughputs count the same useful tokens (sum of the requested output lengths).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
from dataclasses import dataclass

import torch

PRESETS = {
    # name: (model, num_requests, min_len, max_len, device)
    "cpu": ("smollm2-135m", 16, 32, 256, "cpu"),
    "qwen3-0.6b": ("qwen3-0.6b-random", 256, 100, 1024, "cuda"),
}

# Qwen3-0.6B's public config.json (architecture only): weights are random, since no weights
# can be downloaded on the benchmark machine, and throughput does not depend on their values.
QWEN3_06B_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936,
    "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000,
    "tie_word_embeddings": True, "hidden_act": "silu", "attention_bias": False,
    "bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "bfloat16",
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


def random_qwen3_dir() -> str:
    """A Qwen3-0.6B-shaped HF directory with random bf16 weights (made once, in a temp dir)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    out = os.path.join(tempfile.gettempdir(), "minisgl_edu-qwen3-0.6b-random")
    if not os.path.exists(os.path.join(out, "config.json")):
        cfg = AutoConfig.for_model(**QWEN3_06B_CONFIG)
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16)
        model.save_pretrained(out)
    return out


def run_engine(model: str, wl: Workload, device: str, **engine_kw) -> tuple[float, list[list[int]]]:
    from minisgl_edu import LLM, SamplingParams

    llm = LLM(model, device=device, **engine_kw)
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in wl.output_lens]
    llm.generate([p[:8] for p in wl.prompts[:2]], SamplingParams(max_tokens=4, ignore_eos=True))  # warm-up
    _sync(device)
    t0 = time.perf_counter()
    outs = llm.generate(wl.prompts, params)
    _sync(device)
    seconds = time.perf_counter() - t0
    assert [len(o.token_ids) for o in outs] == wl.output_lens
    return seconds, [o.token_ids for o in outs]


def run_transformers(model_dir: str, wl: Workload, device: str, dtype: torch.dtype) -> float:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(device).eval()
    pad = model.config.eos_token_id if isinstance(model.config.eos_token_id, int) else 0
    width = max(len(p) for p in wl.prompts)
    ids = torch.full((len(wl.prompts), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(wl.prompts):  # left padding, as generation needs
        ids[i, width - len(p):] = torch.tensor(p)
        mask[i, width - len(p):] = 1
    steps = max(wl.output_lens)
    kw = dict(max_new_tokens=steps, min_new_tokens=steps, do_sample=False, pad_token_id=pad)
    with torch.inference_mode():
        model.generate(ids[:2, -8:].to(device), attention_mask=mask[:2, -8:].to(device), max_new_tokens=4,
                       do_sample=False, pad_token_id=pad)  # warm-up
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
    ap.add_argument("--page-size", type=int, default=16)
    ap.add_argument("--max-running-requests", type=int, default=None)
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
    engine_kw = dict(page_size=args.page_size, max_running_requests=args.max_running_requests or max(n, 1))
    if device == "cpu":
        engine_kw["max_total_tokens"] = sum(len(p) for p in wl.prompts) + wl.output_tokens + 1024
    eng_s, _ = run_engine(model_dir, wl, device, **engine_kw)
    res = {
        "preset": args.preset, "machine": machine(), "requests": n,
        "input_tokens": sum(len(p) for p in wl.prompts), "output_tokens": wl.output_tokens,
        "engine_s": round(eng_s, 2), "engine_tok_s": round(wl.output_tokens / eng_s, 1),
    }
    if not args.skip_transformers:
        dtype = torch.float32 if device == "cpu" else torch.bfloat16
        hf_s = run_transformers(model_dir, wl, device, dtype)
        res.update(hf_s=round(hf_s, 2), hf_tok_s=round(wl.output_tokens / hf_s, 1), speedup=round(hf_s / eng_s, 2))
    print(f"| preset | machine | requests | output tokens | engine tok/s | transformers tok/s | ratio |")
    print(f"|---|---|---|---|---|---|---|")
    print(f"| {res['preset']} | {res['machine']} | {n} | {wl.output_tokens} | {res['engine_tok_s']} | "
          f"{res.get('hf_tok_s', '-')} | {res.get('speedup', '-')} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return res


if __name__ == "__main__":
    main()
