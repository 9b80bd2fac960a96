"""Tensor parallelism on the CPU (gloo): N ranks must sample exactly the tokens one rank samples.

The engine-level tests spawn the ranks with `minisgl_edu.server.tp_ranks.generate_tp`; one test
goes through the real server with `--tp 2`. Each is bounded with pytest-timeout.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from live_server import children_of, free_port

from minisgl_edu.core import SamplingParams

pytestmark = pytest.mark.slow

# A few short prompts of different lengths, batched together (token ids: no tokenizer needed).
PROMPTS = [[1, 504, 1517, 314], [9690, 28, 2114, 41, 87, 11, 1099], [100, 200]]
GREEDY = SamplingParams(max_tokens=10, temperature=0.0, ignore_eos=True)


def _greedy_reference(model: str, **overrides) -> dict[int, list[int]]:
    from minisgl_edu.server.tp_ranks import generate_tp

    # Also through a spawned process (one thread), like the ranks: the same code path, tp=1.
    return generate_tp(model, PROMPTS, [GREEDY] * len(PROMPTS), 1, **overrides)[0]


def test_tp_size_must_divide_the_heads():
    from minisgl_edu.distributed import check_tp_size
    from minisgl_edu.models import ModelConfig

    smollm2 = ModelConfig.from_hf(
        {
            "model_type": "llama",
            "vocab_size": 49152,
            "hidden_size": 576,
            "intermediate_size": 1536,
            "num_hidden_layers": 30,
            "num_attention_heads": 9,
            "num_key_value_heads": 3,
            "max_position_embeddings": 2048,
            "rms_norm_eps": 1e-5,
        }
    )
    check_tp_size(smollm2, 1)
    check_tp_size(smollm2, 3)
    with pytest.raises(ValueError, match=r"--tp 2 does not divide .*query heads \(9\), KV heads \(3\).*: 1, 3"):
        check_tp_size(smollm2, 2)


@pytest.mark.timeout(90)
def test_server_refuses_tp_2_on_the_default_model(default_model_dir):
    """Refused before any worker starts: the error names the heads."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "minisgl_edu.serve",
            "--model",
            default_model_dir,
            "--tp",
            "2",
            "--port",
            str(free_port()),
            "--device",
            "cpu",
        ],
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "--tp 2 does not divide the model's query heads (9), KV heads (3)" in proc.stderr
    assert "minisgl-TP" not in proc.stdout + proc.stderr  # no scheduler was started


@pytest.mark.timeout(180)
def test_tp2_matches_tp1_on_the_tiny_model(tiny_model_dir):
    from minisgl_edu.server.tp_ranks import generate_tp

    overrides = {"num_pages": 32, "page_size": 4}
    want = _greedy_reference(tiny_model_dir, **overrides)
    # Plus one sampled request without a seed: rank 0 must pick the seed for every rank.
    prompts = PROMPTS + [[5, 6, 7]]
    params = [GREEDY] * len(PROMPTS) + [SamplingParams(max_tokens=10, temperature=1.0, ignore_eos=True)]
    ranks = generate_tp(tiny_model_dir, prompts, params, 2, **overrides)
    assert ranks[0] == ranks[1]  # the same tokens on every rank, sampled one included
    got = {uid: ranks[0][uid] for uid in want}
    assert got == want
    assert all(len(t) == 10 for t in ranks[0].values())


def test_tp2_matches_tp1_with_float16_weights(tiny_model_dir):
    """The packed float16 layers (models/cpu_layers.py) split across ranks: the row-parallel
    layers all-reduce float32 partial sums of float16 weights."""
    from minisgl_edu.server.tp_ranks import generate_tp

    overrides = {"num_pages": 32, "page_size": 4, "cpu_weights": "float16"}
    want = _greedy_reference(tiny_model_dir, **overrides)
    ranks = generate_tp(tiny_model_dir, PROMPTS, [GREEDY] * len(PROMPTS), 2, **overrides)
    assert ranks[0] == ranks[1] == want


@pytest.mark.timeout(300)
def test_tp3_matches_tp1_on_the_default_model(default_model_dir):
    from minisgl_edu.server.tp_ranks import generate_tp

    overrides = {"num_pages": 32}
    want = _greedy_reference(default_model_dir, **overrides)
    ranks = generate_tp(default_model_dir, PROMPTS, [GREEDY] * len(PROMPTS), 3, **overrides)
    assert ranks[0] == ranks[1] == ranks[2] == want


# ---------------------------------------------------------------------------- the real server


@pytest.mark.timeout(240)
def test_server_tp2_serves_the_same_greedy_text(tiny_model_dir, tmp_path):
    import httpx

    from minisgl_edu.llm import LLM

    port = free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "minisgl_edu.serve",
            "--model",
            tiny_model_dir,
            "--tp",
            "2",
            "--port",
            str(port),
            "--device",
            "cpu",
            "--num-pages",
            "64",
            "--page-size",
            "4",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    workers: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 180
        while not re.search(r"ready in", (tmp_path / "server.log").read_text()):
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, "server not ready"
            time.sleep(0.3)
        workers = children_of(proc.pid)
        names = sorted(workers.values())
        assert "minisgl-TP0-scheduler" in names and "minisgl-TP1-scheduler" in names, names

        url = f"http://127.0.0.1:{port}/v1/completions"
        body = {"prompt": PROMPTS[0], "max_tokens": 8, "temperature": 0, "ignore_eos": True}
        r = httpx.post(url, json=body, timeout=60)
        assert r.status_code == 200, r.text
        text = r.json()["choices"][0]["text"]
        # A sampled request without a seed also completes (the ranks agree on its seed).
        r2 = httpx.post(url, json={**body, "temperature": 0.8}, timeout=60)
        assert r2.status_code == 200, r2.text

        llm = LLM(tiny_model_dir, device="cpu", num_pages=64, page_size=4)
        want = llm.generate(PROMPTS[0], SamplingParams(max_tokens=8, temperature=0.0, ignore_eos=True))[0]
        assert text == want.text
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for pid in workers:  # never leave a rank behind, even if the test failed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()
    assert proc.returncode == 0, (tmp_path / "server.log").read_text()
