"""Correctness of the CUDA model path against `transformers` (GPU machine only).

    python scripts/maintainer/gpu_fused_check.py model   # our model (torch attention) vs transformers
    python scripts/maintainer/gpu_fused_check.py engine  # the whole engine (FlashInfer + Triton, CUDA graphs, overlap)

"fused": the CUDA layers swapped in (`models/cuda_layers.py`, all of our Triton kernels);
"unfused": the plain layers (model part) or `fused_kernels=False` (engine part).

Weights: the benchmark's random Qwen3-0.6B-shaped bf16 checkpoint (`random_qwen3_dir`) with every
RMSNorm weight perturbed (1 + 0.2 N(0,1): at 1.0 a misplaced norm weight would go unnoticed),
saved once to /tmp/minisgl_edu-qwen3-0.6b-perturbed. The reference is transformers in float32 on
those same (bf16-representable) weights; transformers in bf16 is measured against it too, so our
bf16 error has a yardstick. Greedy tokens are compared as "our token is the float32 model's
argmax on our own prefix" (random weights have near-ties, so a bf16 run may legitimately pick
the other side of one; where they differ we print the float32 logit margin).
Results go to $OUT/correct_<part>.json; exit status 1 if a check fails.
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch

PERTURBED = os.environ.get("FUSED_CHECK_MODEL", "/tmp/minisgl_edu-qwen3-0.6b-perturbed")
DEV = os.environ.get("FUSED_CHECK_DEVICE", "cuda")  # "cpu": a dry run of the script's logic
t0 = time.perf_counter()
part = sys.argv[1]
out_dir = os.environ.get("OUT", "/tmp")
res: dict = {"part": part}
ok = True


def rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def prompts(n: int, lo: int, hi: int, seed: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randint(
            100, hf32.config.vocab_size - 100, (int(torch.randint(lo, hi, (1,), generator=g)),), generator=g
        ).tolist()
        for _ in range(n)
    ]


def hf_model(dtype):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(PERTURBED, torch_dtype=dtype, attn_implementation="sdpa").to(DEV).eval()


@torch.no_grad()
def hf_logits(hf, tokens: list[int]) -> torch.Tensor:
    return hf(torch.tensor([tokens], device=DEV)).logits[0].float()


@torch.no_grad()
def argmax_check(hf32, prompt: list[int], generated: list[int]) -> tuple[int, list[float]]:
    """How many generated tokens equal the fp32 argmax on their own prefix; margins where not."""
    logits = hf_logits(hf32, prompt + generated)[len(prompt) - 1 : -1]
    best = logits.argmax(-1).tolist()
    margins = [round((logits[i, best[i]] - logits[i, t]).item(), 4) for i, t in enumerate(generated) if best[i] != t]
    return sum(b == t for b, t in zip(best, generated)), margins


if not os.path.exists(os.path.join(PERTURBED, "config.json")):
    from transformers import AutoModelForCausalLM

    from minisgl_edu.bench.offline import random_qwen3_dir

    m = AutoModelForCausalLM.from_pretrained(random_qwen3_dir(), torch_dtype=torch.bfloat16)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
    m.save_pretrained(PERTURBED)
    del m

hf32 = hf_model(torch.float32)

if part == "model":
    from minisgl_edu.engine.config import TRITON_KERNELS
    from minisgl_edu.models.config import ModelConfig
    from minisgl_edu.models.cuda_layers import use_cuda_layers, use_plain_layers
    from minisgl_edu.models.decoder import create_model
    from minisgl_edu.models.testing import PagedRunner

    hf16 = hf_model(torch.bfloat16)
    cfg = ModelConfig.from_hf(hf32.config)
    ours = create_model(cfg, torch.bfloat16, DEV, random_init=False)
    ours.load_weights(hf16.state_dict().items())
    ps = prompts(2, 30, 200, seed=0)
    steps = 8
    ref = [hf_logits(hf32, p) for p in ps]
    res["hf_bf16_prefill_rel"] = max(rel(hf_logits(hf16, p), r) for p, r in zip(ps, ref))

    def run_ours(fused: bool):
        use_plain_layers(ours)
        if fused and DEV == "cuda":
            use_cuda_layers(ours, fused=True, triton=TRITON_KERNELS)
        runner = PagedRunner(ours, cfg, page_size=16, max_tokens=2048, max_reqs=4, max_len=512)
        rows = [runner.add_request() for _ in ps]
        pre = runner.step(list(zip(rows, ps)), all_logits=True)  # both prompts in one prefill
        gen: list[list[int]] = [[] for _ in ps]
        dec: list[list[torch.Tensor]] = [[] for _ in ps]
        last = [x[-1] for x in pre]
        for _ in range(steps):  # both requests decode together
            nxt = [int(x.argmax()) for x in last]
            for i, t in enumerate(nxt):
                gen[i].append(t)
            last = runner.step([(r, [t]) for r, t in zip(rows, nxt)])
            for i, x in enumerate(last):
                dec[i].append(x)
        return pre, gen, dec

    for name, fused in (("fused", True), ("unfused", False)):
        pre, gen, dec = run_ours(fused)
        res[f"{name}_prefill_rel"] = max(rel(x, r) for x, r in zip(pre, ref))
        # decode logits vs fp32 on the same (our own) prefix; the last step's logits are unused
        dec_rel, hf16_dec_rel, match, margins = [], [], 0, []
        for p, g, d in zip(ps, gen, dec):
            full = hf_logits(hf32, p + g)[len(p) :]  # row j: after g[j], as our decode step j
            dec_rel.append(rel(torch.stack(d), full))
            hf16_dec_rel.append(rel(hf_logits(hf16, p + g)[len(p) :], full))
            m_, mg = argmax_check(hf32, p, g)
            match += m_
            margins += mg
        res[f"{name}_decode_rel"] = max(dec_rel)
        res["hf_bf16_decode_rel"] = max(hf16_dec_rel)
        res[f"{name}_greedy_match"] = f"{match}/{steps * len(ps)}"
        res[f"{name}_greedy_margins"] = margins
        res[f"{name}_tokens"] = gen
    # Within 1e-2, or at least no worse than transformers' own bf16 run (x1.5) on a deep model.
    ok &= res["fused_prefill_rel"] < max(1e-2, 1.5 * res["hf_bf16_prefill_rel"])
    ok &= res["fused_decode_rel"] < max(1e-2, 1.5 * res["hf_bf16_decode_rel"])
else:  # engine
    from minisgl_edu import SamplingParams
    from minisgl_edu.bench.offline import _IdTokenizer
    from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig

    ps = prompts(6, 20, 400, seed=1)
    n = 24

    def engine_tokens(fused: bool) -> list[list[int]]:
        sched = Scheduler(
            SchedulerConfig(
                model=PERTURBED,
                device=DEV,
                num_pages=4096,
                page_size=16,
                max_running_requests=8,
                cuda_graph_max_bs=8,
                fused_kernels=fused,
                attention_backend="flashinfer,triton" if DEV == "cuda" else "torch",
            ),
            QueueIO(),
            tokenizer=_IdTokenizer(),
        )
        assert DEV == "cpu" or sched.engine.graph_runner is not None
        for i, p in enumerate(ps):
            sched.add_request(i, p, SamplingParams(max_tokens=n, ignore_eos=True))
        sched.run_until_idle(overlap=True)
        toks: dict[int, list[int]] = {i: [] for i in range(len(ps))}
        for msg in sched.io.drain():
            if msg.next_token >= 0:
                toks[msg.uid].append(msg.next_token)
        del sched
        if DEV == "cuda":
            torch.cuda.empty_cache()
        return [toks[i] for i in range(len(ps))]

    for name, fused in (("fused", True), ("unfused", False)):
        gen = engine_tokens(fused)
        match, margins = 0, []
        for p, g in zip(ps, gen):
            m_, mg = argmax_check(hf32, p, g)
            match += m_
            margins += mg
        res[f"engine_{name}_greedy_match"] = f"{match}/{n * len(ps)}"
        res[f"engine_{name}_margins"] = margins
        res[f"engine_{name}_tokens"] = gen
    same = sum(a == b for x, y in zip(res["engine_fused_tokens"], res["engine_unfused_tokens"]) for a, b in zip(x, y))
    res["engine_fused_vs_unfused_same"] = f"{same}/{n * len(ps)}"
    # Accept a mismatch only at a near-tie of the float32 model.
    ok &= all(m < 0.1 for m in res["engine_fused_margins"])

res["ok"] = bool(ok)
res["seconds"] = round(time.perf_counter() - t0, 1)
json.dump(res, open(os.path.join(out_dir, f"correct_{part}.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in res.items() if not k.endswith("_tokens")}))
sys.exit(0 if ok else 1)
