"""Exercises 5 (schedule) and 6 (prefix_cache): the injection points, and the shell grader on the
solution notebooks and on the untouched exercise notebooks. (The package's own answers, graded as
every exercise's are: tests/test_grading.py.)

The wrong answers of tests/mutants/schedule/ and tests/mutants/prefix_cache/ are graded by
tests/test_grading_mutants.py, with the other exercises'.
"""

from __future__ import annotations

import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading import grade
from minisgl_edu.kvcache.radix_cache import RadixCache
from minisgl_edu.scheduler import Scheduler, SchedulerConfig
from minisgl_edu.scheduler.scheduler import schedule_next_batch


def _tiny(tiny_model_dir, **kw) -> Scheduler:
    cfg = dict(model=tiny_model_dir, device="cpu", page_size=4, num_pages=64, max_prefill_tokens=8)
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg))


def test_the_engine_decides_through_schedule_fn(tiny_model_dir):
    s = _tiny(tiny_model_dir)
    assert s.schedule_fn is schedule_next_batch
    seen = []

    def spy(scheduler):
        batch = schedule_next_batch(scheduler)
        seen.append(None if batch is None else (batch.phase, batch.num_tokens))
        return batch

    s.schedule_fn = spy
    s.add_request(0, list(range(100, 120)), SamplingParams(max_tokens=2, ignore_eos=True))
    s.run_until_idle()
    # 20 prompt tokens under a budget of 8: three chunks, then one decode step for the 2nd token.
    # The last call finds nothing to do; only real batches are numbered.
    assert seen == [("prefill", 8), ("prefill", 8), ("prefill", 4), ("decode", 1), None]
    assert s.batch_count == 4


def test_a_swapped_in_prefix_cache_is_the_one_used(tiny_model_dir):
    s = _tiny(tiny_model_dir, num_pages=64, max_prefill_tokens=64)
    assert isinstance(s.cache.prefix_cache, RadixCache)
    calls = []

    class Recording(RadixCache):
        def match_prefix(self, ids):
            calls.append(len(ids))
            return super().match_prefix(ids)

    s.cache.prefix_cache = Recording(s.cache.page_size)
    prompt = list(range(100, 120))
    for uid in range(2):
        s.add_request(uid, prompt, SamplingParams(max_tokens=2, ignore_eos=True))
        records = s.run_until_idle()
    assert calls == [19, 19]  # the prompt minus its last token, once per admission
    assert records[0].items[0][1] == 16  # the second request reused four cached pages
    s.cache.check()


@pytest.mark.slow
@pytest.mark.parametrize(
    "notebook,names",
    [("05_schedule", ("schedule", "schedule_lpm")), ("06_prefix_cache", ("prefix_cache", "prefix_cache_lfu"))],
)
def test_shell_grader_on_the_notebooks(notebook, names, capsys):
    from minisgl_edu.grading import exercise
    from minisgl_edu.grading.__main__ import main

    total = sum(len(exercise(name).CASES) for name in names)  # the base part and its stretch

    assert main([f"solutions/{notebook}.ipynb"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"
    assert main([f"exercises/{notebook}.ipynb"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: 0/{total}"


@pytest.mark.slow
def test_schedule_grader_hides_the_engine_answer():
    def borrows_methods(scheduler):
        if scheduler.waiting:
            batch = scheduler._schedule_prefill()
            if batch is not None:
                return batch
        return scheduler._schedule_decode() if scheduler.running else None

    res = grade("schedule", borrows_methods, only=["prefill before decode"])
    assert not res.full_marks and "engine's own scheduling code" in res.results[0].message
