"""Graders: full marks for the package's own solutions, less for stubs and for typical mistakes.

Instructors can run one exercise's grader with `pytest -m exercise_abort` (markers per exercise).
"""

from __future__ import annotations

import pytest

from minisgl_edu.grading import EXERCISES, exercise, grade

pytestmark = pytest.mark.slow


def _stub(*args, **kwargs):
    raise NotImplementedError


class _StubClass:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError


MARKS = {name: getattr(pytest.mark, f"exercise_{name}") for name in EXERCISES}


@pytest.mark.parametrize("name", [pytest.param(n, marks=MARKS[n]) for n in EXERCISES])
def test_solution_gets_full_marks(name):
    mod = exercise(name)
    res = grade(name, mod.SOLUTION)
    assert res.full_marks, res.report()


@pytest.mark.parametrize("name", [pytest.param(n, marks=MARKS[n]) for n in EXERCISES])
def test_untouched_stub_gets_zero(name):
    stub = _StubClass if name in ("detokenizer", "allocator") else _stub
    res = grade(name, stub)
    assert res.score == 0 and res.total >= 4, res.report()


@MARKS["abort"]
def test_abort_that_forgets_the_pages_fails():
    def leaky(scheduler, uid):
        req = scheduler.reqs.pop(uid, None)
        if req is None:
            return False
        for queue in (scheduler.waiting, scheduler.running):
            if req in queue:
                queue.remove(req)
        return True  # no release: pages and row leak, no message to the detokenizer

    res = grade("abort", leaky)
    failed = {r.name for r in res.results if not r.passed}
    assert {"abort mid chunked prefill", "abort while decoding"} <= failed
    assert "unknown uid" not in failed


@MARKS["finish"]
def test_finish_that_ignores_stop_strings_fails():
    from minisgl_edu.scheduler.finish import check_finish

    def no_stops(req, eos_ids, decode):
        return check_finish(req, eos_ids, None)

    res = grade("finish", no_stops)
    assert [r.name for r in res.results if not r.passed] == ["stop strings"]


@MARKS["allocator"]
def test_shell_grader_on_notebooks(capsys):
    from minisgl_edu.grading.__main__ import main

    assert main(["solutions/04_page_allocator.ipynb"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "score: 5/5"
    assert main(["exercises/04_page_allocator.ipynb"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "score: 0/5"


def test_exercises_are_in_sync_with_solutions():
    from pathlib import Path

    from minisgl_edu.course.exercises import build

    assert build(Path("solutions"), Path("exercises"), check=True) == []
