"""Sampling on CUDA: FlashInfer's sampling kernels, the logits chain (penalties, logit bias, grammar
masks) against its CPU path, and the engine's graphs with the chain, logprobs, grammars and n.

Marked `gpu` and skipped without CUDA; run them on the GPU machine with
`pytest -q tests/test_gpu_sampling.py`. A grammar needs a real vocabulary, so the chain tests use
the default model's tokenizer: the converted default model, or MINISGL_EDU_TOKENIZER_DIR naming a
folder of only its tokenizer files. Greedy rows must give the CPU path's (and eager decoding's)
tokens exactly; sampled rows draw from another generator, so they are checked by what they may
draw (inside the top-k, a token the grammar allows) and by repeating themselves under one seed.
"""

from __future__ import annotations

import pytest
import torch
from gpu_support import assert_all_pages_back, gpu, make_scheduler, needs_cuda, prompts

from minisgl_edu.core import SamplingParams


# ---------------------------------------------------------------------- FlashInfer sampling
@gpu
@needs_cuda
def test_flashinfer_sampling():
    from minisgl_edu.core import Req
    from minisgl_edu.engine.flashinfer_sampler import sample_flashinfer
    from minisgl_edu.engine.sampler import make_generator

    torch.manual_seed(0)
    logits = torch.randn(6, 1000, device="cuda") * 3

    def reqs(**sp):
        out = []
        for i in range(6):
            params = SamplingParams(**sp)
            out.append(Req(uid=i, input_ids=[1], sampling_params=params, generator=make_generator(params, "cpu")))
        return out

    argmax = logits.argmax(-1)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=0.0)), argmax)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=1.0, top_k=1)), argmax)
    assert torch.equal(sample_flashinfer(logits, reqs(temperature=1.0, top_p=1e-6, seed=3)), argmax)
    a = sample_flashinfer(logits, reqs(temperature=1.0, top_k=50, top_p=0.9, seed=11))
    b = sample_flashinfer(logits, reqs(temperature=1.0, top_k=50, top_p=0.9, seed=11))
    assert torch.equal(a, b)  # seeded: reproducible
    # Every sampled token is inside its row's top 50.
    top50 = logits.topk(50, dim=-1).indices
    assert all(int(a[i]) in top50[i].tolist() for i in range(6))


# ---------------------------------------------------------------------- the logits chain on CUDA
CHAIN = dict(repetition_penalty=1.3, frequency_penalty=0.8, presence_penalty=0.4, logit_bias={7: 3.0, 11: -2.0})


@gpu
@needs_cuda
def test_chain_and_flashinfer_sampling_give_the_torch_paths_greedy_tokens(default_tokenizer_dir):
    """The same logits through the chain on CUDA (grammar mask by XGrammar's CUDA kernel,
    FlashInfer for the sampled rows) and on CPU: the same processed logits and greedy tokens, and
    a sampled row under a mask only ever draws an allowed token."""
    from transformers import AutoTokenizer

    from minisgl_edu.core import Req
    from minisgl_edu.engine.grammar import GrammarCompiler
    from minisgl_edu.engine.sampler import Sampler, make_generator

    tok = AutoTokenizer.from_pretrained(default_tokenizer_dir)
    vocab = 49152
    compiler = GrammarCompiler(tok, vocab, [tok.eos_token_id])
    torch.manual_seed(0)
    logits = torch.randn(6, vocab) * 4

    def reqs(device: str) -> list[Req]:
        out = []
        for i in range(6):
            sp = SamplingParams(**CHAIN) if i % 2 else SamplingParams()
            if i >= 3:
                sp = SamplingParams(regex="(yes|no)[0-9]+", temperature=1.0 if i == 5 else 0.0, seed=3, **CHAIN)
            r = Req(uid=i, input_ids=[5, 7, 9], sampling_params=sp, generator=make_generator(sp, device))
            r.output_ids = [7, 7, 11, 300 + i]
            if sp.regex:
                r.grammar = compiler.compile("regex", sp.regex)
            out.append(r)
        return out

    cpu_reqs, cuda_reqs = reqs("cpu"), reqs("cuda")
    sampler = Sampler()
    a = sampler.process_fn(logits, cpu_reqs)
    b = sampler.process_fn(logits.cuda(), cuda_reqs)
    assert torch.allclose(a, b.cpu(), atol=1e-5)  # -inf where masked, on both
    ta, tb = sampler.sample(logits, cpu_reqs), sampler.sample(logits.cuda(), cuda_reqs).cpu()
    assert torch.equal(ta[:5], tb[:5])  # every greedy row (row 5 samples)
    allowed = torch.isfinite(a[5])
    for _ in range(20):
        assert bool(allowed[int(sampler.sample(logits.cuda(), cuda_reqs)[5])])


@gpu
@needs_cuda
def test_graph_decode_with_the_chain_and_logprobs_matches_eager(tiny_qwen3_dir):
    eager = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=0, attention_backend="flashinfer")
    graph = make_scheduler(tiny_qwen3_dir, "cuda", cuda_graph_max_bs=16, attention_backend="flashinfer")
    ps = prompts(6, 5, 60, seed=4)
    runs = []
    for sched in (eager, graph):
        base = 1000 * (sched.batch_count + 1)
        for i, p in enumerate(ps):
            sp = SamplingParams(max_tokens=20, ignore_eos=True, logprobs=i % 2 == 0, top_logprobs=3, **CHAIN)
            sched.add_request(base + i, p, sp)
        sched.run_until_idle(overlap=True)
        msgs = [m for m in sched.io.drain() if m.next_token >= 0]
        runs.append(([(m.uid - base, m.next_token) for m in msgs], [m.logprob for m in msgs if m.logprob is not None]))
        assert_all_pages_back(sched)
    (tokens_a, lp_a), (tokens_b, lp_b) = runs
    assert tokens_a == tokens_b and len(lp_a) == 3 * 20
    assert lp_b == pytest.approx(lp_a, abs=0.05)


@pytest.fixture(scope="module")
def tiny_qwen3_tokenizer_dir(tmp_path_factory, default_tokenizer_dir) -> str:
    """Qwen3-0.6B's attention shape (what FlashInfer and the graphs are tuned for) with the default
    model's vocabulary and tokenizer: what a grammar needs."""
    from conftest import _save_random_model
    from transformers import AutoTokenizer

    from minisgl_edu.models.testing import tiny_hf_config

    cfg = tiny_hf_config(
        "qwen3",
        vocab_size=49152,
        hidden_size=256,
        intermediate_size=512,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
    )
    out = _save_random_model(cfg, tmp_path_factory.mktemp("tiny-qwen3-tok"))
    AutoTokenizer.from_pretrained(default_tokenizer_dir).save_pretrained(out)
    return out


@gpu
@needs_cuda
def test_grammar_and_n_on_the_gpu_engine(tiny_qwen3_tokenizer_dir):
    import re

    from minisgl_edu.scheduler import Scheduler, SchedulerConfig

    sched = Scheduler(SchedulerConfig(model=tiny_qwen3_tokenizer_dir, device="cuda", num_pages=512, page_size=16))
    p = [100 + 13 * i for i in range(40)]
    sp = SamplingParams(max_tokens=30, regex="(yes|no), [0-9]{3}", n=3)
    reqs = [sched.add_request(0, p, sp)] + [sched.add_request(u, p, sp, prompt_leader=0) for u in (1, 2)]
    sched.run_until_idle(overlap=True)
    texts = {sched.tokenizer.decode(r.output_ids, skip_special_tokens=True) for r in reqs}
    assert len(texts) == 1 and re.fullmatch(r"(yes|no), [0-9]{3}", texts.pop())
    assert [r.prefix_len for r in reqs] == [0, 32, 32]
    assert_all_pages_back(sched)
