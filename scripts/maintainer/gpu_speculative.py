"""Speculative decoding on a GPU: the same greedy tokens with and without drafts, on the torch and
FlashInfer backends, compared with the torch backend on CPU; then, given the bundled model's GGUF
file, the real model at one stream with the server's CUDA defaults, drafts off and on, on the
edit requests and on the chat questions of the serving benchmark. Prints short tables last.

    bash scripts/maintainer/gpu.sh speculative TOKENIZER_DIR [GGUF | random]   (or: python scripts/maintainer/gpu_speculative.py ...)

`random`: the bundled model's shape with random weights in place of the GGUF file: the answers
are not the model's, but what a verify step costs in decode steps (the table's last column) is.
"""

from __future__ import annotations

import os
import random
import sys
import time

from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import Scheduler, SchedulerConfig
from minisgl_edu.tokenizer.template import encode_prompt

DEVICE = "cuda"  # one_stream: the server's defaults on this device


def prompts() -> list[list[int]]:
    out = []
    for seed, n in enumerate([9, 23, 40, 64, 5, 31, 100, 17]):
        rng = random.Random(seed)
        phrase = [rng.randrange(100, 40000) for _ in range(rng.randrange(3, 8))]
        out.append((phrase * (n // len(phrase) + 1))[:n])
    return out


def run(model: str, device: str, backend: str, spec: bool, dtype: str) -> tuple[dict, int, float]:
    cfg = dict(model=model, device=device, page_size=16, num_pages=512, attention_backend=backend, dtype=dtype)
    if spec:
        cfg["speculative_algorithm"] = "ngram"
    s = Scheduler(SchedulerConfig(**cfg))
    sp = SamplingParams(max_tokens=48, ignore_eos=True)
    for uid, p in enumerate(prompts()):
        s.add_request(uid, p, sp)
    t0 = time.perf_counter()
    s.run_until_idle(overlap=device == "cuda")
    seconds = time.perf_counter() - t0
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages
    out: dict[int, list[int]] = {}
    for m in s.io.drain():
        if m.next_token >= 0:
            out.setdefault(m.uid, []).append(m.next_token)
    return out, s.speculator.accepted_tokens_total, seconds


def head_dim_64(tokenizer_dir: str, layers: int = 4) -> str:
    """A random-weight model with the bundled model's head shape (FlashInfer needs head_dim 64 or
    more), 4 layers (30: the bundled model's shape), and the tokenizer files of `tokenizer_dir`."""
    import shutil
    from pathlib import Path

    import torch
    from transformers import AutoModelForCausalLM

    from minisgl_edu.models.testing import tiny_hf_config

    out = Path(f"/tmp/spec-model-{layers}")
    cfg = tiny_hf_config(
        "llama",
        vocab_size=49152,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=layers,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(cfg).save_pretrained(out)
    for f in Path(tokenizer_dir).iterdir():
        if f.name.startswith("tokenizer") or f.name.endswith(".jinja"):
            shutil.copy(f, out / f.name)
    return str(out)


def one_stream(model: str, spec: dict | None, prompts: list[str]) -> tuple[list[list[int]], int, int, int, float]:
    """Each chat prompt alone, greedy, up to 256 tokens, with the server's CUDA defaults (FlashInfer,
    CUDA graphs, overlap): -> the tokens, drafts proposed and accepted, verify steps, seconds of
    generation."""
    # A KV cache of 64k tokens: enough for one stream, and the next Scheduler of this process finds
    # the GPU's memory free (the server's default takes most of it).
    cfg = dict(model=model, device=DEVICE, dtype="bfloat16" if DEVICE == "cuda" else "float32", num_pages=4096)
    if spec is not None:
        cfg.update(speculative_algorithm="ngram", **spec)
    s = Scheduler(SchedulerConfig(**cfg))
    tok = s.tokenizer
    sp = SamplingParams(max_tokens=256)

    def generate(uid: int, text: str) -> list[int]:
        s.add_request(uid, encode_prompt(tok, [{"role": "user", "content": text}]), sp)
        s.run_until_idle(overlap=True)
        return [m.next_token for m in s.io.drain() if m.next_token >= 0]

    def verifies() -> int:
        return sum(sum(row) for row in s.speculator.verify_outcomes)

    generate(10_000, prompts[0])  # warm-up
    drafts0, accepted0, verifies0 = s.speculator.draft_tokens_total, s.speculator.accepted_tokens_total, verifies()
    t0 = time.perf_counter()
    out = [generate(uid, p) for uid, p in enumerate(prompts)]
    seconds = time.perf_counter() - t0
    return (
        out,
        s.speculator.draft_tokens_total - drafts0,
        s.speculator.accepted_tokens_total - accepted0,
        verifies() - verifies0,
        seconds,
    )


def real_model(model: str) -> None:
    from minisgl_edu.bench.chat_prompts import EDIT_REQUESTS, QUESTIONS

    rows = []
    variants = {
        "k4 n2-4": {},
        "k7 n2-4": {"speculative_num_draft_tokens": 7},  # the 8-row graph that 5 rows use, filled
        "k4 n3-4": {"speculative_ngram_min": 3},
        "k8 n3-4": {"speculative_ngram_min": 3, "speculative_num_draft_tokens": 8},
    }
    for name, prompts in (("edits", list(EDIT_REQUESTS)), ("questions", list(QUESTIONS[:8]))):
        off, _, _, _, t_off = one_stream(model, None, prompts)
        for variant, spec in variants.items():
            on, drafts, accepted, verifies, t_on = one_stream(model, spec, prompts)
            n_off, n_on = sum(map(len, off)), sum(map(len, on))
            same = sum(a == b for a, b in zip(off, on))
            # What one verify step cost, in plain decode steps: the run's time in steps of drafts-off
            # speed, less the tokens that came from plain steps (each verify gives accepted + 1).
            step = t_off / n_off
            cost = (t_on / step - (n_on - accepted - verifies)) / verifies if verifies else float("nan")
            rows.append(
                (name, variant, n_off / t_off, n_on / t_on, same, len(prompts), drafts, accepted, verifies, cost)
            )
    print(
        f"{'workload':<10} {'drafts':<10} {'off tok/s':>10} {'on tok/s':>9} {'x':>6} {'same':>6} {'drafts':>7}"
        f" {'accepted':>9} {'verifies':>9} {'verify cost':>12}"
    )
    for name, variant, off, on, same, n, drafts, accepted, verifies, cost in rows:
        print(
            f"{name:<10} {variant:<10} {off:>10.1f} {on:>9.1f} {on / off:>6.2f} {same:>3}/{n} {drafts:>7}"
            f" {accepted:>9} {verifies:>9} {cost:>12.2f}"
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[2] == "random":
        # The bundled model's shape with random weights: what a verify step costs, whatever the
        # answers (the GGUF file is larger than what can be carried to the lent GPU).
        real_model(head_dim_64(sys.argv[1], layers=30))
    elif len(sys.argv) > 2:
        from minisgl_edu.models.convert import convert_gguf

        model = "/tmp/smollm2-135m"
        os.makedirs(model, exist_ok=True)
        convert_gguf(sys.argv[2], model)
        real_model(model)
    model = head_dim_64(sys.argv[1])
    rows = []
    ref, _, _ = run(model, "cpu", "torch", False, "float32")
    for device, backend, dtype in [("cuda", "torch", "float32"), ("cuda", "flashinfer", "bfloat16")]:
        off, _, t_off = run(model, device, backend, False, dtype)
        on, acc, t_on = run(model, device, backend, True, dtype)
        same_ref = sum(off[u] == ref[u] for u in ref)
        rows.append((device, backend, dtype, sum(on[u] == off[u] for u in off), same_ref, acc, t_off, t_on))
    print(f"{'device':<6} {'backend':<11} {'dtype':<9} {'on==off':>8} {'off==cpu':>9} {'accepted':>9}")
    for d, b, t, eq, eqr, acc, *_ in rows:
        print(f"{d:<6} {b:<11} {t:<9} {eq:>5}/{len(ref)} {eqr:>6}/{len(ref)} {acc:>9}")


if __name__ == "__main__":
    main()
