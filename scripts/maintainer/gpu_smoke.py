"""A short CUDA smoke test that needs no FlashInfer: the engine on CUDA (torch attention, no
graphs, float32, so the plain layers: no CUDA variant is swapped in, normal loop) gives the same
greedy tokens as on CPU, fp32, for tiny random Llama and Qwen3 models. Run on the GPU machine
after changes to shared model code:

    PYTHONPATH=. python scripts/maintainer/gpu_smoke.py
"""

from __future__ import annotations

import tempfile

import torch
from transformers import AutoModelForCausalLM

from minisgl_edu.core import SamplingParams
from minisgl_edu.models.testing import tiny_hf_config
from minisgl_edu.scheduler import Scheduler, SchedulerConfig


class NoTokenizer:
    eos_token_id = None

    def decode(self, ids, **kw):
        return ""


def run(model_dir: str, device: str) -> dict[int, list[int]]:
    cfg = SchedulerConfig(
        model=model_dir,
        device=device,
        dtype="float32",
        page_size=4,
        num_pages=256,
        attention_backend="torch",
        cuda_graph_max_bs=0,
        overlap=False,
    )
    s = Scheduler(cfg, tokenizer=NoTokenizer())
    for uid, n in enumerate([5, 17, 33]):
        s.add_request(uid, [(7 * i + uid) % 120 + 3 for i in range(n)], SamplingParams(max_tokens=12, ignore_eos=True))
    s.run_until_idle()
    out: dict[int, list[int]] = {}
    for m in s.io.drain():
        out.setdefault(m.uid, []).append(m.next_token)
    return out


def main() -> None:
    rows = []
    for arch in ["llama", "qwen3"]:
        d = tempfile.mkdtemp()
        torch.manual_seed(0)
        AutoModelForCausalLM.from_config(tiny_hf_config(arch)).save_pretrained(d)
        cpu, cuda = run(d, "cpu"), run(d, "cuda")
        rows.append((arch, cpu == cuda, sum(len(v) for v in cuda.values())))
    print("| arch | cuda == cpu | tokens |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    assert all(r[1] for r in rows)


if __name__ == "__main__":
    main()
