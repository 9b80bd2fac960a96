"""The request features on the GPU: the GPU tests of the logits chain, grammars, logprobs and n,
then what the chain and logprobs cost per decode step (`minisgl_edu.bench.logits_chain`).

Needs the default model's tokenizer and config in MINISGL_EDU_TOKENIZER_DIR (a few MB: the GGUF
package is too big to carry); the benchmark runs random bfloat16 weights of that shape.

    MINISGL_EDU_TOKENIZER_DIR=.gpu/tok python scripts/maintainer/gpu_requests.py [--skip-tests]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

TESTS = [
    "tests/test_gpu_sampling.py::test_chain_and_flashinfer_sampling_give_the_torch_paths_greedy_tokens",
    "tests/test_gpu_sampling.py::test_graph_decode_with_the_chain_and_logprobs_matches_eager",
    "tests/test_gpu_sampling.py::test_grammar_and_n_on_the_gpu_engine",
    "tests/test_gpu_sampling.py::test_flashinfer_sampling",
    "tests/test_gpu.py::test_cuda_graph_greedy_matches_eager",
    "tests/test_gpu.py::test_overlap_greedy_matches_normal",
    "tests/test_gpu.py::test_abort_storm_under_overlap",
]


def random_model(tok_dir: str) -> str:
    """The tokenizer's model shape with random bfloat16 weights (made once, in a temp dir)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    out = os.path.join(tempfile.gettempdir(), "minisgl_edu-smollm2-random")
    if not os.path.exists(os.path.join(out, "model.safetensors")):
        torch.manual_seed(0)
        cfg = AutoConfig.from_pretrained(tok_dir)
        AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16).save_pretrained(out)
        for name in os.listdir(tok_dir):
            if name.startswith(("tokenizer", "chat_template", "generation_config")):
                shutil.copy(os.path.join(tok_dir, name), out)
    return out


def main() -> int:
    tok_dir = os.environ["MINISGL_EDU_TOKENIZER_DIR"]
    out = os.environ.get("OUT", tempfile.gettempdir())
    rows = []
    if "--skip-tests" not in sys.argv:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", *TESTS], capture_output=True, text=True)
        with open(os.path.join(out, "gpu_requests_tests.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        rows.append(f"tests: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-300:]}")
        rows.append(f"  ({time.perf_counter() - t0:.0f} s)")
    from minisgl_edu.bench.logits_chain import main as bench

    model = random_model(tok_dir)
    rows += bench(["--model", model, "--device", "cuda", "--batch", "32", "--steps", "10", "--rounds", "3"])
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
