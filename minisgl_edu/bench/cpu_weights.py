"""The CPU weight formats side by side: how fast a decode step is, and what each one keeps.

    python -m minisgl_edu.bench.cpu_weights               # SmolLM2-135M, the bundled model
    python -m minisgl_edu.bench.cpu_weights --prompts 16 --tokens 64

Where this sits: beside the engine, not on the request path. It builds the default model once
per format and compares each with float32, the exact model:

* float32: the plain modules (`models/layers.py`), token for token as transformers.
* float16: what the server runs on CPU by default, `models/cpu_layers.py` (float16 weights packed
  for FBGEMM, float32 math).
* int4: `--cpu-weights int4` (`models/cpu_layers.py`): the layers' matmuls on the file's 4-bit
  blocks, bfloat16 at the matmuls' inputs and outputs; fast only with AVX512-BF16.
* bfloat16: what `--dtype bfloat16` runs: every weight and activation in bfloat16, through
  oneDNN, which uses AVX512-BF16 or AMX where the CPU has them. A candidate measured, not the
  default.
* int8: a candidate measured and not offered: FBGEMM's dynamic int8 matmul (int8 weights with a
  scale per output row; activations quantized per call with one scale for the whole [T, in]
  input). Built here only, by `use_int8_candidate`.

Quality, measured rather than assumed:

1. greedy agreement: the chat prompts of the serving benchmark (`bench/chat_prompts.py`), each
   answered greedily for `--tokens` tokens; per prompt the position of the first token that
   differs from float32's answer (`--tokens` when none does);
2. the mean log-likelihood per token of a fixed English text (`TEXT`), teacher-forced, against
   float32's.

Speed: the median time of a decode step at batch 1 and at batch 16 (every request ~100 tokens
in), model only (`models/testing.PagedRunner`), after warm-up. The serving figures, against
llama.cpp, are `bench/peer.py`'s (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
import warnings
from dataclasses import dataclass

import torch
from torch import nn

from minisgl_edu.bench.chat_prompts import QUESTIONS
from minisgl_edu.models.testing import PagedRunner

# A fixed text for the log-likelihood: plain English prose, not from the model's training set
# as far as we know (written for this package).
TEXT = (
    "The library opens at nine in the morning and closes at six in the evening. On weekdays the "
    "reading room is quiet, and most visitors come to study or to borrow books for the week. "
    "Children's stories are on the ground floor, next to a small table with crayons and paper. "
    "Upstairs there are newspapers from the last month, a shelf of maps, and four computers that "
    "anyone with a library card may use for an hour. If a book is not on the shelf, the staff "
    "can order it from another branch; it usually arrives within three days. Late returns cost "
    "nothing, but the library asks everyone to bring books back on time so that others can read "
    "them too."
)

FORMATS = ("float32", "float16", "int4", "bfloat16", "int8")


@dataclass
class Quality:
    fmt: str
    first_divergence: list[int]  # per prompt: first position where the greedy answer differs from float32's
    tokens: int  # tokens answered per prompt
    mean_log_likelihood: float  # nats per token of TEXT

    @property
    def identical(self) -> int:
        """Prompts answered exactly as float32 answers them."""
        return sum(d == self.tokens for d in self.first_divergence)


def use_int8_candidate(model: nn.Module) -> nn.Module:
    """The int8 candidate (in place): every linear layer and the logits through FBGEMM's dynamic
    int8 matmul. For this comparison only: it is not one of the engine's formats."""
    from minisgl_edu.distributed.linear import ColumnParallelLinear, RowParallelLinear

    def pack(weight: torch.Tensor):
        w = weight.detach().float().contiguous()
        scale = (w.abs().amax(dim=1) / 127).clamp(min=1e-12).double()
        zero = torch.zeros(w.shape[0], dtype=torch.long)
        with warnings.catch_warnings():  # torch marks its quantized tensors deprecated
            warnings.simplefilter("ignore")
            return torch.ops.quantized.linear_prepack(torch.quantize_per_channel(w, scale, zero, 0, torch.qint8), None)

    def int8_forward(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
        y = torch.ops.quantized.linear_dynamic(x, module.packed, True)  # reduce_range: AVX2's 16-bit sums
        return y if module.bias is None else y + module.bias

    torch.backends.quantized.engine = "fbgemm"
    for module in model.modules():
        if type(module) in (ColumnParallelLinear, RowParallelLinear):
            module.packed = pack(module.weight)
            module.forward = int8_forward.__get__(module)
    head = model.lm_head
    head.packed_logits = pack(head.weight)
    head.shard_logits = lambda hidden: torch.ops.quantized.linear_dynamic(hidden, head.packed_logits, True)
    return model


def model_in(fmt: str, fp32_model: nn.Module) -> nn.Module:
    """A copy of the float32 model in weight format `fmt` (float32: the model itself)."""
    if fmt == "float32":
        return fp32_model
    model = copy.deepcopy(fp32_model)
    if fmt in ("float16", "int4"):
        from minisgl_edu.models.cpu_layers import use_cpu_layers

        use_cpu_layers(model, fmt)
        return model
    if fmt == "bfloat16":
        # Parameters only: the RoPE table stays float32, as the engine builds it for any dtype.
        # contiguous(): [out, in], as loading in bfloat16 stores them (`models/loader.py` keeps
        # float32 matrices as [in, out], a layout oneDNN's bfloat16 matmul is slower with).
        for param in model.parameters():
            param.data = param.data.to(torch.bfloat16).contiguous()
        return model
    if fmt == "int8":
        return use_int8_candidate(model)
    raise ValueError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")


def greedy_answers(model: nn.Module, cfg, prompts: list[list[int]], tokens: int) -> list[list[int]]:
    """Every prompt answered greedily for `tokens` tokens, all prompts in one batch per step."""
    longest = max(map(len, prompts)) + tokens
    runner = PagedRunner(model, cfg, max_tokens=len(prompts) * (longest + 16), max_reqs=len(prompts), max_len=longest)
    rows = [runner.add_request() for _ in prompts]
    logits = runner.step(list(zip(rows, prompts)))
    answers: list[list[int]] = [[] for _ in prompts]
    for _ in range(tokens):
        nxt = [int(x.argmax()) for x in logits]
        for answer, t in zip(answers, nxt):
            answer.append(t)
        logits = runner.step([(row, [t]) for row, t in zip(rows, nxt)])
    return answers


def mean_log_likelihood(model: nn.Module, cfg, ids: list[int]) -> float:
    """Mean log p(ids[i] | ids[:i]) over i >= 1, in nats, teacher-forced in one prefill."""
    runner = PagedRunner(model, cfg, max_tokens=len(ids) + 16, max_len=len(ids) + 1)
    (logits,) = runner.step([(runner.add_request(), ids)], all_logits=True)
    logp = torch.log_softmax(logits[:-1].float(), dim=-1)
    return logp.gather(1, torch.tensor(ids[1:])[:, None]).mean().item()


def first_divergence(ref: list[int], other: list[int]) -> int:
    return next((i for i, (a, b) in enumerate(zip(ref, other)) if a != b), min(len(ref), len(other)))


def chat_prompts(tokenizer, n: int) -> list[list[int]]:
    from minisgl_edu.tokenizer.template import encode_prompt

    return [encode_prompt(tokenizer, [{"role": "user", "content": q}]) for q in QUESTIONS[:n]]


def load_float32(model_name: str = "smollm2-135m"):
    """-> (the float32 model, its config, its tokenizer): the reference every format is compared with."""
    from minisgl_edu.models import load_model, load_tokenizer, resolve_model

    model_dir = resolve_model(model_name)
    fp32, cfg = load_model(model_dir, dtype=torch.float32)
    return fp32, cfg, load_tokenizer(model_dir)


def compare(fp32: nn.Module, cfg, tokenizer, fmts: list[str], n_prompts: int, tokens: int) -> list[Quality]:
    """Quality of each format against float32 (the first row is float32 against itself)."""
    prompts = chat_prompts(tokenizer, n_prompts)
    text_ids = list(tokenizer.encode(TEXT))
    ref = greedy_answers(fp32, cfg, prompts, tokens)
    rows = []
    for fmt in ["float32", *[f for f in fmts if f != "float32"]]:
        model = model_in(fmt, fp32)
        answers = ref if fmt == "float32" else greedy_answers(model, cfg, prompts, tokens)
        rows.append(
            Quality(
                fmt,
                [first_divergence(r, a) for r, a in zip(ref, answers)],
                tokens,
                mean_log_likelihood(model, cfg, text_ids),
            )
        )
    return rows


def decode_step_ms(model: nn.Module, cfg, batch: int, context: int = 100, steps: int = 20) -> float:
    """Median ms of one decode step of `batch` requests with `context` tokens each."""
    runner = PagedRunner(
        model, cfg, max_tokens=batch * (context + steps + 16), max_reqs=batch, max_len=context + steps + 1
    )
    rows = [runner.add_request() for _ in range(batch)]
    runner.step([(row, [1 + (i * 7 + j) % 1000 for j in range(context)]) for i, row in enumerate(rows)])
    times = []
    for step in range(steps):
        t0 = time.perf_counter()
        runner.step([(row, [5 + step]) for row in rows])
        times.append(time.perf_counter() - t0)
    return statistics.median(times[3:]) * 1e3


def compile_norms_and_mlp(model: nn.Module) -> nn.Module:
    """torch.compile (dynamic shapes) over each layer's two norms and its MLP, in place: the
    elementwise ops between the matmuls fused by Inductor. Measured with `--compile`, not used."""
    for layer in model.model.layers:
        for module in (layer.input_layernorm, layer.post_attention_layernorm, layer.mlp):
            module.forward = torch.compile(module.forward, dynamic=True)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default 0: all cores)")
    parser.add_argument(
        "--compile", action="store_true", help="also time float16 with torch.compile over each layer's norms and MLP"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    fp32, cfg, tokenizer = load_float32()
    rows = compare(fp32, cfg, tokenizer, args.formats, args.prompts, args.tokens)
    print(
        f"\nSmolLM2-135M-Instruct, {torch.get_num_threads()} threads; {args.prompts} chat prompts x {args.tokens} greedy tokens"
    )
    print(
        "| weights | prompts identical to float32 | first divergence (median, min) | mean log-likelihood (nats/token) | decode step, batch 1 | batch 16 |"
    )
    print("|---|---|---|---|---|---|")
    for q in rows:
        model = model_in(q.fmt, fp32)
        b1, b16 = decode_step_ms(model, cfg, 1), decode_step_ms(model, cfg, 16)
        print(
            f"| {q.fmt} | {q.identical} / {len(q.first_divergence)} | {statistics.median(q.first_divergence):.0f}, "
            f"{min(q.first_divergence)} | {q.mean_log_likelihood:.4f} | {b1:.1f} ms | {b16:.1f} ms |"
        )
    if args.compile:
        model = compile_norms_and_mlp(model_in("float16", fp32))
        t0 = time.perf_counter()
        decode_step_ms(model, cfg, 1, steps=4)  # the first calls compile
        compile_s = time.perf_counter() - t0
        b1, b16 = decode_step_ms(model, cfg, 1), decode_step_ms(model, cfg, 16)
        print(
            f"| float16 + torch.compile (norms, MLP; {compile_s:.0f} s to compile) | | | | {b1:.1f} ms | {b16:.1f} ms |"
        )


if __name__ == "__main__":
    main()
