"""Exercise 8 (verify): the injection point `Scheduler.verify_fn` and what the scheduler does with
a result, the grader's own pieces (its plain-loop step with switchable mistakes, the engine
scenarios it relies on), and the grader on the solution and exercise notebooks.

The references' full marks, the stubs' zero and the own-code rule are checked with every other
exercise in test_grading.py; the wrong answers of tests/mutants/verify/ in test_grading_mutants.py.
"""

from __future__ import annotations

import random

import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading import grade
from minisgl_edu.grading.verify import base as grader
from minisgl_edu.grading.verify import engine, step
from minisgl_edu.kvcache import pages_for
from minisgl_edu.scheduler import Scheduler, SchedulerConfig
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult, verify_step

pytestmark = pytest.mark.exercise_verify

UNIT = [c.name for c in grader.CASES if not c.engine]
# The answers below call the grader's plain-loop step by this name: naming the grader's module in an
# answer would count as using the reference's module (the own-code rule).
plain_step = step._step


def _spec_scheduler(model_dir: str, **kw) -> Scheduler:
    cfg = dict(model=model_dir, device="cpu", page_size=4, num_pages=256, speculative_algorithm="ngram")
    return Scheduler(SchedulerConfig(**{**cfg, **kw}))


def test_the_scheduler_applies_what_verify_fn_returns(tiny_model_dir):
    """Every verify goes through `verify_fn`; its pages go back, cached_len becomes its kv_len, its
    tokens are what the request gets, and the record shows its accepted drafts and pages."""
    s = _spec_scheduler(tiny_model_dir)
    assert s.verify_fn is verify_step
    seen: list[tuple[VerifyRequest, list[int], list[int], VerifyResult]] = []

    def spy(req, drafts, targets):
        out = verify_step(req, drafts, targets)
        seen.append((req, list(drafts), list(targets), out))
        return out

    s.verify_fn = spy
    prompt = [11, 12, 13, 14, 15, 11, 12, 13, 14, 15, 11, 12]
    s.add_request(0, prompt, SamplingParams(max_tokens=20, ignore_eos=True))
    req = s.reqs[0]
    while not req.is_finished:
        before = len(seen)
        rec = s.step()
        s.cache.check()
        if len(seen) == before:
            continue
        vreq, drafts, targets, out = seen[-1]
        assert vreq.prompt_len == len(prompt) and vreq.page_size == 4 and len(targets) == len(drafts) + 1
        assert rec.accepted[0] == drafts[: out.accepted] and rec.freed_pages[0] == out.free_pages
        assert req.output_ids[-len(out.tokens) :] == out.tokens
        if not req.is_finished:
            assert req.cached_len == out.kv_len == req.total_len - 1
            assert s.cache.held_pages(req) == len(vreq.pages) - len(out.free_pages)
    assert seen and s.cache.num_available == s.cache.num_pages


def test_trim_gives_back_only_the_end_of_a_row_and_never_the_cached_prefix(tiny_model_dir):
    s = _spec_scheduler(tiny_model_dir)
    s.add_request(0, list(range(100, 118)), SamplingParams(max_tokens=8, ignore_eos=True))
    s.step()  # the prefill: 18 prompt tokens, 5 pages of 4
    req = s.reqs[0]
    s.cache.reserve(req, req.total_len + 6)  # as for 6 drafts: 25 positions, 7 pages
    row = list(s.cache.page_table.pages[req.table_idx])
    with pytest.raises(ValueError, match="not the last pages"):
        s.cache.trim(req, row[4:5])
    req.prefix_len = 16  # as if its first 4 pages were a prefix hit
    with pytest.raises(ValueError, match="cached prefix"):
        s.cache.trim(req, row[3:])
    free = s.cache.num_free
    assert s.cache.trim(req, row[5:]) == row[5:] and s.cache.num_free == free + 2
    assert s.cache.page_table.pages[req.table_idx] == row[:5]


WORDS = [" one", " two", " three", " four", " five", " six", " seven", " eight"]


def _random_step(seed: int) -> tuple[VerifyRequest, list[int], list[int]]:
    rng = random.Random(seed)
    ids = [step._id(w) for w in WORDS] + [0, 2]
    k = rng.randint(0, 6)
    n = rng.randint(0, k)
    drafts = [rng.choice(ids) for _ in range(k)]
    targets = drafts[:n] + [rng.choice([t for t in ids if n == k or t != drafts[n]])]
    targets += [rng.choice(ids) for _ in range(k - n)] if rng.random() < 0.8 else []  # else: sampled-style
    output = [rng.choice(ids[:-2]) for _ in range(rng.randint(1, 8))]
    stop = tuple(f"{a.strip()} {b.strip()}" for a, b in [rng.sample(WORDS, 2) for _ in range(rng.randint(0, 2))])
    req = step._req(
        output,
        k,
        prompt_len=rng.randint(1, 30),
        max_new=len(output) + rng.randint(1, 9),
        ignore_eos=rng.random() < 0.3,
        stop=stop,
    )
    if rng.random() < 0.3:
        req.prefix_len = step.PAGE * rng.randint(0, (req.prompt_len - 1) // step.PAGE)
    return req, drafts, targets


@pytest.mark.parametrize("seed", range(60))
def test_the_graders_plain_step_is_the_packages(seed):
    req, drafts, targets = _random_step(seed)
    want = verify_step(step._copy(req), list(drafts), list(targets))
    assert plain_step(req, drafts, targets) == want
    total = req.prompt_len + len(req.output_ids) + len(want.tokens)
    kept = len(req.pages) - len(want.free_pages)  # the bonus token's page may not be reserved yet
    assert want.kv_len == total - 1 and kept == min(pages_for(total, step.PAGE), len(req.pages))


@pytest.mark.parametrize("mistake", sorted(step.MISTAKES))
def test_every_mistake_the_grader_names_is_named_by_some_case(mistake):
    """The step with one mistake made on purpose loses marks, and some case names that mistake."""

    def answer(req, drafts, targets):
        return plain_step(req, drafts, targets, mistake)

    res = grade("verify", answer, only=UNIT)
    assert not res.full_marks, res.report()
    # Pages are described as they are; a page mistake is named only where no other gives the same pages
    said = [step.MISTAKES[mistake][1:], *PAGE_FACTS.get(mistake, [])]
    failed = [r.message + " " + r.hint for r in res.results if not r.passed]
    assert any(s in text for s in said for text in failed), res.report()


PAGE_FACTS = {
    "pages_newest": ["is where the newest token's K/V goes next step"],
    "pages_uncut": ["hold only rejected drafts or tokens after a finish"],
}


def test_a_correct_answer_from_a_notebook_cell_gets_the_unit_cases():
    def answer(req, drafts, targets):
        return plain_step(req, drafts, targets)

    assert grade("verify", answer, only=UNIT).full_marks


def test_a_result_of_another_type_with_the_same_fields_is_accepted():
    from collections import namedtuple

    Mine = namedtuple("Mine", "accepted tokens finish_reason kv_len free_pages")

    def answer(req, drafts, targets):
        r = plain_step(req, drafts, targets)
        return Mine(r.accepted, tuple(r.tokens), r.finish_reason, r.kv_len, r.free_pages)

    assert grade("verify", answer, only=UNIT).full_marks


@pytest.mark.parametrize("helper", ["accept_greedy", "check_finish"])
def test_the_packages_helpers_are_not_an_answer(helper):
    import minisgl_edu.engine.verify as verify_module
    import minisgl_edu.scheduler.finish as finish_module

    used = getattr(verify_module, helper, None) or getattr(finish_module, helper)

    def answer(req, drafts, targets):
        used  # referenced, as a helper the answer would call
        return plain_step(req, drafts, targets)

    res = grade("verify", answer, only=UNIT[:2])
    assert res.score == 0 and all("not your own code" in r.message for r in res.results), res.report()
    assert helper in res.results[0].message


def test_the_engine_scenarios_make_what_they_are_for():
    """With the package's step: the n-gram drafts are rejected at times and give pages back; the
    seeded drafts give every number of accepted drafts, and pages back on one and two pages; the
    second pass hits the prefix cache; and the finish scenario cuts runs where it says."""
    for key, scenario in (("ngram", engine.ngram_scenario), ("seeded", engine.seeded_scenario)):
        sc, ref = engine.reference_run(key, scenario)
        run = engine._run(verify_step, sc, again=True)
        assert run.tokens == ref.tokens and run.again == ref.tokens and run.cached == ref.cached
        results = [c.result for c in run.calls]
        assert any(r.accepted < len(c.drafts) for r, c in zip(results, run.calls)), key
        assert any(r.free_pages for r in results), key
        assert any(c.req.prefix_len for c in run.calls), key  # the second pass
        if key == "seeded":
            assert {r.accepted for r in results} >= set(range(engine.K + 1))
            assert {len(r.free_pages) for r in results} >= {0, 1, 2}  # pages of rejected drafts: none, one, two
    sc, ref = engine.reference_run("finish", engine.finish_scenario)
    run = engine._run(verify_step, sc)
    assert run.tokens == ref.tokens and [ref.reasons[u] for u in range(5)] == [
        "stop",
        "length",
        "stop",
        "stop",
        "length",
    ]
    eos = next(iter(sc.eos_ids))
    assert eos in ref.tokens[1][:-1]  # the request with ignore_eos went past it
    assert len(ref.tokens[4]) == 13

    # The finishing verify of requests 0, 2 and 3 kept fewer tokens than the model accepted (a cut
    # inside the run); request 4's last verify ended on the model's own token, the last one allowed.
    def who(call) -> int:
        r = call.req
        for uid, (p, sp) in enumerate(zip(sc.prompts, sc.params)):
            if (len(p), sp.ignore_eos, list(sp.stop), sp.max_tokens) == (
                r.prompt_len,
                r.ignore_eos,
                r.stop,
                r.max_new_tokens,
            ):
                return uid
        raise AssertionError(call)

    calls = {uid: [c for c in run.calls if who(c) == uid] for uid in range(5)}
    for uid in (0, 2, 3):
        last = calls[uid][-1].result
        assert last.finish_reason == "stop" and len(last.tokens) < last.accepted + 1, uid
    last4 = calls[4][-1]
    assert last4.result.finish_reason == "length" and last4.result.accepted == len(last4.drafts) > 0


@pytest.mark.slow
def test_shell_grader_on_the_notebooks(capsys):
    from minisgl_edu.grading.__main__ import main

    total = len(grader.CASES)
    assert main(["solutions/08_verify.ipynb"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"
    assert main(["exercises/08_verify.ipynb"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: 0/{total}"
