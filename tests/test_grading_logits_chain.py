"""Exercise 7 (logits_chain): the injection point, the grader's own pieces (its plain-loop chain
with switchable mistakes, the min_p reference), the engine requests it relies on, and the grader
on the solution and exercise notebooks.

The references' full marks, the stubs' zero and the own-code rule are checked with every other
exercise in test_grading.py; the wrong answers of tests/mutants/logits_chain/ and
tests/mutants/logits_chain_min_p/ in test_grading_mutants.py.
"""

from __future__ import annotations

import random

import pytest
import torch
from grading_support import failed_cases

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.logits_chain import process_logits
from minisgl_edu.grading import grade
from minisgl_edu.grading.logits_chain import base as grader
from minisgl_edu.grading.logits_chain import chain
from minisgl_edu.grading.logits_chain import min_p as stretch
from minisgl_edu.scheduler import Scheduler, SchedulerConfig

pytestmark = pytest.mark.exercise_logits_chain

UNIT = [c.name for c in grader.CASES if not c.engine]
STRETCH = [c.name for c in stretch.CASES]
# The answers below call the grader's plain-loop chain by this name: naming the grader's module in
# an answer would count as using the reference's module (the own-code rule).
plain_chain = chain._chain


def test_the_sampler_runs_the_chain_through_process_fn(tiny_model_dir):
    s = Scheduler(SchedulerConfig(model=tiny_model_dir, device="cpu", page_size=4, num_pages=64))
    assert s.engine.sampler.process_fn is process_logits
    seen = []

    def spy(logits, reqs):
        seen.append((tuple(logits.shape), [r.uid for r in reqs]))
        return process_logits(logits, reqs)

    s.engine.sampler.process_fn = spy
    for uid in range(2):
        s.add_request(uid, [100 + uid, 101, 102], SamplingParams(max_tokens=2, ignore_eos=True))
    s.run_until_idle()
    vocab = s.vocab_size
    assert seen == [((2, vocab), [0, 1]), ((2, vocab), [0, 1])]  # one prefill batch, one decode batch


def _random_batch(seed: int) -> tuple[torch.Tensor, list[Req]]:
    rng = random.Random(seed)
    reqs = []
    for _ in range(rng.randint(1, 6)):
        params = dict(temperature=rng.choice([0.0, 0.7, 1.0, 1.5]))
        if rng.random() < 0.5:
            params["repetition_penalty"] = rng.choice([0.8, 1.0, 1.3, 2.0])
        if rng.random() < 0.5:
            params["frequency_penalty"] = rng.uniform(-2, 2)
        if rng.random() < 0.5:
            params["presence_penalty"] = rng.uniform(-2, 2)
        if rng.random() < 0.4:
            params["logit_bias"] = {rng.randrange(chain.V): rng.uniform(-5, 5) for _ in range(rng.randint(1, 3))}
        grammar = None
        if rng.random() < 0.3:
            grammar = chain._grammar(accepted=rng.choice([(), (6,), (4,), (8,)]))
        prompt = [rng.randrange(chain.V) for _ in range(rng.randint(1, 6))]
        output = [rng.randrange(chain.V) for _ in range(rng.randint(0, 6))]
        req = chain._req(prompt, output, grammar=grammar, **params)
        if rng.random() < 0.4:
            req.sampling_params.min_p = rng.choice([0.0, 0.05, 0.2, 0.5])
        reqs.append(req)
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(len(reqs), chain.V, generator=gen) * 3, reqs


@pytest.mark.parametrize("seed", range(40))
def test_the_graders_plain_chain_is_the_packages(seed):
    logits, reqs = _random_batch(seed)
    assert chain._close_all(chain._chain(logits, reqs), process_logits(logits.clone(), reqs).float())
    assert chain._close_all(chain._chain(logits, reqs, min_p=True), chain.reference_chain(logits.clone(), reqs))


def test_min_p_reference_keeps_what_is_near_the_top():
    logits = torch.tensor([[3.0, 2.0, 0.0, -1.0]])
    sampled = chain._req(temperature=1.0, min_p=0.3)  # keep p >= 0.3 p_max: logit >= 3 - 1.204
    greedy = chain._req(min_p=0.3)
    out = chain._min_p(torch.cat([logits, logits]), [sampled, greedy])
    assert out[0].tolist() == [3.0, 2.0, float("-inf"), float("-inf")]
    assert out[1].tolist() == logits[0].tolist()


@pytest.mark.parametrize("mistake", sorted(chain.MISTAKES))
def test_every_mistake_the_grader_names_is_named_by_some_case(mistake):
    """The chain with one mistake made on purpose loses marks on the score line of its part, and
    some case names that mistake."""

    def answer(logits, reqs):
        return plain_chain(logits, reqs, mistake, min_p=True)

    part, cases = ("logits_chain_min_p", STRETCH) if mistake in chain.MIN_P_MISTAKES else ("logits_chain", UNIT)
    words = chain.MISTAKES[mistake]
    res, failed = failed_cases(part, answer, cases, lambda hand: any(words in r.message for r in hand))
    assert not res.full_marks, res.report()
    assert any(words in r.message for r in failed.values()), res.report()


def test_a_correct_answer_from_a_notebook_cell_gets_the_unit_cases():
    def answer(logits, reqs):
        return plain_chain(logits, reqs, min_p=True)

    assert grade("logits_chain", answer, only=UNIT).full_marks
    assert grade("logits_chain_min_p", answer).full_marks


def test_the_stretch_has_its_own_score_line():
    """An answer without min_p gets every unit case of the base part and none of the stretch's."""

    def answer(logits, reqs):
        return plain_chain(logits, reqs)

    assert grade("logits_chain", answer, only=UNIT).full_marks
    res = grade("logits_chain_min_p", answer)
    assert res.score < res.total, res.report()


@pytest.mark.parametrize(
    "helper",
    ["process_logits", "apply_penalties", "apply_logit_bias", "token_counts", "grammar_mask"],
)
def test_the_packages_helpers_are_not_an_answer(helper):
    import minisgl_edu.engine.grammar as grammar_module
    import minisgl_edu.engine.logits_chain as chain_module

    used = getattr(chain_module, helper, None) or getattr(grammar_module, helper)

    def answer(logits, reqs):
        used  # referenced, as a helper the answer would call
        return plain_chain(logits, reqs, min_p=True)

    res = grade("logits_chain", answer, only=UNIT[:2])
    assert res.score == 0 and all("it uses the package's own" in r.message for r in res.results), res.report()
    assert helper in res.results[0].message


@pytest.mark.slow
def test_the_engine_requests_depend_on_their_links():
    """Each engine case's requests answer differently without their links, so a chain that skips
    one is caught; the package's chain is put back even when a student's raises."""
    for requests in (grader.penalty_requests, grader.bias_grammar_requests):
        params, prompts = requests()
        ref = grader.reference_run(requests)
        plain = [SamplingParams(max_tokens=sp.max_tokens) for sp in params]
        bare = grader.run_with_chain(process_logits, plain, prompts)
        for uid, sp in enumerate(params):
            uses = sp.has_penalties or sp.logit_bias or sp.grammar_spec is not None
            assert (ref.tokens[uid] != bare.tokens[uid]) == bool(uses), (uid, ref.tokens[uid], bare.tokens[uid])

    def broken(logits, reqs):
        raise RuntimeError("broken")

    with pytest.raises(RuntimeError):
        grader.run_with_chain(broken, *grader.penalty_requests())
    from minisgl_edu.grading.harness import new_scheduler

    assert new_scheduler().engine.sampler.process_fn is process_logits


@pytest.mark.slow
def test_shell_grader_on_the_notebooks(capsys):
    from minisgl_edu.grading.__main__ import main

    total = len(grader.CASES) + len(stretch.CASES)  # base part and stretch, on two score lines
    assert main(["solutions/07_logits_chain.ipynb"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"
    assert main(["exercises/07_logits_chain.ipynb"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: 0/{total}"
