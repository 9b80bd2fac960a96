"""What an FP8 KV cache costs in accuracy, measured on the bundled model.

    python -m minisgl_edu.bench.kv_fp8                    # SmolLM2-135M, 32 chat prompts x 64 tokens
    python -m minisgl_edu.bench.kv_fp8 --prompts 48 --tokens 128

Where this sits: beside the engine, not on the request path. The model is the exact float32 one
(`models/layers.py`); only what the KV pages store changes (`kvcache/pool.py`):

* float32: `kv_cache_dtype="auto"` on CPU, the reference;
* bfloat16: the pages of a GPU's "auto", here under float32 math, as a yardstick for the next row;
* fp8_e4m3: `--kv-cache-dtype fp8_e4m3`, e4m3 numbers with a float32 scale per token and KV head.

Per chat prompt (`bench/chat_prompts.py`), the reference answers greedily for `--tokens` tokens;
each other format then reads the same tokens, teacher-forced (prefill of the prompt, then one
decode step per answer token, its K/V stored in that format). Up to the first position where the
format's argmax differs from the reference's token, its own greedy answer *is* the reference's, so
that position is where its greedy answer would first diverge (`--tokens`: never). The logits'
error is over every position, the reference's own path: the largest |difference| of any logit,
and the largest of the chosen token's logit, beside the logits' typical spread (their standard
deviation over the vocabulary) for scale.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

import torch

from minisgl_edu.bench.cpu_weights import chat_prompts, load_float32
from minisgl_edu.kvcache.pool import FP8
from minisgl_edu.models.testing import PagedRunner

KV_FORMATS: dict[str, torch.dtype | None] = {"float32": None, "bfloat16": torch.bfloat16, "fp8_e4m3": FP8}


@dataclass
class KVQuality:
    fmt: str
    first_divergence: list[int]  # per prompt: first answer position whose argmax differs (tokens: none)
    tokens: int
    max_logit_error: float  # largest |logit - reference logit| over every vocabulary entry and position
    max_chosen_error: float  # the same, of the reference's chosen token only
    logit_std: float  # median over positions of the reference logits' standard deviation

    @property
    def identical(self) -> int:
        return sum(d == self.tokens for d in self.first_divergence)


def answer_logits(model, cfg, prompts: list[list[int]], answers: list[list[int]] | None, tokens: int, kv_dtype):
    """Logits [prompts, tokens, vocab] along the answers: greedy when `answers` is None (and the
    answers it chose), else teacher-forced along the given ones. All prompts in one batch per step."""
    longest = max(map(len, prompts)) + tokens
    runner = PagedRunner(
        model, cfg, max_tokens=len(prompts) * (longest + 16), max_reqs=len(prompts), max_len=longest, kv_dtype=kv_dtype
    )
    rows = [runner.add_request() for _ in prompts]
    logits = runner.step(list(zip(rows, prompts)))
    chosen = [[] for _ in prompts] if answers is None else answers
    steps = []
    for t in range(tokens):
        steps.append(torch.stack(logits))
        if answers is None:
            for answer, x in zip(chosen, logits):
                answer.append(int(x.argmax()))
        if t + 1 < tokens:
            logits = runner.step([(row, [a[t]]) for row, a in zip(rows, chosen)])
    return torch.stack(steps, dim=1), chosen


def compare(model, cfg, prompts: list[list[int]], tokens: int, fmts: list[str]) -> list[KVQuality]:
    ref_logits, ref_answers = answer_logits(model, cfg, prompts, None, tokens, None)
    chosen = torch.tensor(ref_answers)  # [prompts, tokens]
    std = statistics.median(ref_logits.std(-1).flatten().tolist())
    rows = []
    for fmt in fmts:
        logits = (
            ref_logits
            if fmt == "float32"
            else answer_logits(model, cfg, prompts, ref_answers, tokens, KV_FORMATS[fmt])[0]
        )
        differs = logits.argmax(-1) != chosen  # [prompts, tokens]
        first = [int(d.nonzero()[0]) if d.any() else tokens for d in differs]
        error = (logits - ref_logits).abs()
        rows.append(
            KVQuality(
                fmt,
                first,
                tokens,
                float(error.max()),
                float(error.gather(-1, chosen[..., None]).max()),
                std,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default 0: all cores)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    model, cfg, tokenizer = load_float32()
    prompts = chat_prompts(tokenizer, args.prompts)
    assert len(prompts) == args.prompts, f"only {len(prompts)} chat prompts in bench/chat_prompts.py"
    with torch.inference_mode():
        rows = compare(model, cfg, prompts, args.tokens, list(KV_FORMATS))
    print(f"\nSmolLM2-135M-Instruct, float32 math; {args.prompts} chat prompts x {args.tokens} greedy tokens")
    print(
        "| KV pages | prompts identical to float32 | first divergence of the others | largest logit error | "
        "largest error of the chosen token's logit | logits' spread (std) |"
    )
    print("|---|---|---|---|---|---|")
    for q in rows:
        diverged = sorted(d for d in q.first_divergence if d < q.tokens)
        print(
            f"| {q.fmt} | {q.identical} / {len(q.first_divergence)} | {diverged or '-'} | "
            f"{q.max_logit_error:.3f} | {q.max_chosen_error:.3f} | {q.logit_std:.2f} |"
        )


if __name__ == "__main__":
    main()
