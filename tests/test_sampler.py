"""Sampler behaviour: greedy, top-k, top-p, per-request seeds inside one batch."""

from __future__ import annotations

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.sampler import Sampler, filter_logits, make_generator


def _req(uid, **kw):
    sp = SamplingParams(**kw)
    r = Req(uid, [1], sp)
    r.generator = make_generator(sp, "cpu")
    return r


def test_top_k_one_equals_greedy():
    torch.manual_seed(0)
    logits = torch.randn(6, 50)
    reqs = [_req(i, temperature=1.3, top_k=1, seed=i) for i in range(6)]
    assert torch.equal(Sampler().sample(logits, reqs), logits.argmax(-1))


def test_top_p_never_leaves_the_nucleus():
    logits = torch.tensor([4.0, 3.0, 1.0, 0.0, -1.0, -2.0])
    probs = torch.softmax(logits, -1)
    nucleus = {0, 1}  # p(0)+p(1) = 0.93 >= 0.9, p(0) alone = 0.70 < 0.9
    assert probs[0] < 0.9 <= probs[0] + probs[1]
    req = _req(0, temperature=1.0, top_p=0.9, seed=1)
    seen = {int(Sampler().sample(logits[None], [req])[0]) for _ in range(300)}
    assert seen == nucleus
    kept = filter_logits(logits, 1.0, -1, 0.9)
    assert (kept[2:] == 0).all() and abs(float(kept.sum()) - 1) < 1e-6


def test_top_k_keeps_only_k_tokens():
    logits = torch.arange(10, dtype=torch.float32)
    req = _req(0, temperature=5.0, top_k=3, seed=3)
    seen = {int(Sampler().sample(logits[None], [req])[0]) for _ in range(200)}
    assert seen <= {7, 8, 9} and len(seen) == 3


def test_same_seed_same_tokens_regardless_of_batch_mates():
    torch.manual_seed(0)
    logits = torch.randn(20, 3, 100)

    def run(with_mates: bool):
        a = _req(0, temperature=1.0, seed=1234)
        mates = [_req(i, temperature=0.8, top_p=0.5, seed=i) for i in (1, 2)] if with_mates else []
        out = []
        for step in range(20):
            rows = logits[step][: 1 + len(mates)]
            out.append(int(Sampler().sample(rows, [a] + mates)[0]))
        return out

    assert run(False) == run(True)
    other = _req(0, temperature=1.0, seed=99)
    assert [int(Sampler().sample(logits[s][:1], [other])[0]) for s in range(20)] != run(False)


def test_mixed_greedy_and_sampled_rows_in_one_batch():
    torch.manual_seed(0)
    logits = torch.randn(3, 30)
    reqs = [_req(0), _req(1, temperature=1.0, seed=5), _req(2)]
    out = Sampler().sample(logits, reqs)
    assert out[0] == logits[0].argmax() and out[2] == logits[2].argmax()


def test_degenerate_parameters_fall_back_to_greedy():
    torch.manual_seed(0)
    logits = torch.randn(2, 40) * 30
    reqs = [_req(0, temperature=1e-300, seed=1), _req(1, temperature=1.0, top_p=5e-324, seed=2)]
    out = Sampler().sample(logits, reqs)
    assert out[0] == logits[0].argmax()
    assert 0 <= int(out[1]) < 40
