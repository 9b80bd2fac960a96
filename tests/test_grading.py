"""Graders: full marks for the package's own solutions, zero for the untouched stubs, and the
rules every grader follows (own code, time limits, feedback that names the student's line, the
shell grader). The wrong answers each grader must catch are in test_grading_mutants.py.

Instructors can run one exercise's grader with `pytest -m exercise_abort` (markers per exercise).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import torch

from minisgl_edu.grading import EXERCISES, exercise, grade
from minisgl_edu.scheduler import QueueIO

ROOT = Path(__file__).resolve().parent.parent


def _mark(name):
    return getattr(pytest.mark, f"exercise_{name}")


def _per_exercise():
    return [pytest.param(n, marks=_mark(n)) for n in EXERCISES]


def _stub_for(name):
    """What an untouched exercise defines: a function or a class whose body raises."""
    if isinstance(exercise(name).SOLUTION, type):

        class Stub:
            def __init__(self, *args, **kwargs):
                raise NotImplementedError("write your solution here")

        return Stub

    def stub(*args, **kwargs):
        raise NotImplementedError("write your solution here")

    return stub


@pytest.mark.slow
@pytest.mark.parametrize("name", _per_exercise())
def test_solution_gets_full_marks(name):
    res = grade(name, exercise(name).SOLUTION, allow_reference=True)
    assert res.full_marks, res.report()


@pytest.mark.parametrize("name", _per_exercise())
def test_untouched_stub_gets_zero(name):
    res = grade(name, _stub_for(name))
    assert res.score == 0 and res.total >= 4, res.report()
    assert all("not implemented yet" in r.message for r in res.results), res.report()


@pytest.mark.parametrize("name", _per_exercise())
def test_the_packages_own_answer_is_not_an_answer(name):
    res = grade(name, exercise(name).SOLUTION)
    assert res.score == 0, res.report()
    assert all("not your own code" in r.message for r in res.results), res.report()


@pytest.mark.parametrize("name", _per_exercise())
def test_garbage_gets_a_score_not_a_crash(name):
    for junk in (None, 42, "abort_request"):
        res = grade(name, junk)
        assert res.score == 0 and res.results and all(r.message for r in res.results), res.report()


# --- the own-code rule ---------------------------------------------------------------------------


def test_own_code_sees_every_way_to_borrow_the_reference():
    import minisgl_edu
    from minisgl_edu.grading.own_code import borrowed
    from minisgl_edu.kvcache import allocator as allocator_module
    from minisgl_edu.kvcache.allocator import OutOfPages, PageAllocator

    class Sub(PageAllocator):
        pass

    class Wrapper:
        def __init__(self, n):
            self._a = PageAllocator(n)

    def helper(n):
        return allocator_module.PageAllocator(n)

    class ViaHelper:
        def __init__(self, n):
            self._a = helper(n)

    class ViaPackage:
        def __init__(self, n):
            self._a = minisgl_edu.kvcache.allocator.PageAllocator(n)

    def make(ref=PageAllocator):
        class ViaDefault:
            def __init__(self, n):
                self._a = ref(n)

        return ViaDefault

    class ViaNested:
        def __init__(self, n):
            def build():
                return [PageAllocator(n)]

            self._a = build()[0]

    class ViaMethod:
        free = PageAllocator.free

    for cls in (PageAllocator, Sub, Wrapper, ViaHelper, ViaPackage, make(), ViaNested, ViaMethod):
        assert borrowed(cls, PageAllocator), cls.__name__

    class Own:  # uses OutOfPages from the same module, as the exercise asks: that is fine
        def __init__(self, n):
            self.free_list = list(range(n))

        def allocate(self, n):
            if n > len(self.free_list):
                raise OutOfPages("no")
            return [self.free_list.pop() for _ in range(n)]

    assert borrowed(Own, PageAllocator) is None


@pytest.mark.parametrize("name", _per_exercise())
def test_the_solution_notebooks_code_is_its_own(name):
    from minisgl_edu.grading.own_code import borrowed, references

    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        ns, names, _ = _namespace(path)
        if name in names:
            assert borrowed(ns[exercise(name).SYMBOL], *references(exercise(name))) is None, path.name
            return
    pytest.skip(f"no solution notebook checks {name!r}")


@functools.lru_cache(maxsize=None)
def _namespace(path):
    from minisgl_edu.grading.__main__ import notebook_namespace

    return notebook_namespace(str(path))


# --- time limits and feedback ---------------------------------------------------------------------


def test_a_looping_answer_fails_its_case_on_the_time_limit():
    from minisgl_edu.kvcache import OutOfPages

    class Looping:
        def __init__(self, n):
            self.free_list = list(range(n))

        @property
        def num_free(self):
            return len(self.free_list)

        def allocate(self, n):
            if n > len(self.free_list):
                raise OutOfPages("no")
            return [self.free_list.pop() for _ in range(n)]

        def free(self, pages):
            while pages:  # never shrinks
                pass

    res = grade("allocator", Looping, only=["free and reuse", "double free"], time_limit=0.5)
    assert res.score == 0, res.report()
    for r in res.results:
        assert "did not finish within 0.5 s" in r.message and "while pages:" in r.message, res.report()
        assert r.where and r.where.startswith(__file__), r.where


def test_cases_after_a_time_out_get_a_share_of_their_limit():
    from minisgl_edu.grading.core import AFTER_A_TIMEOUT, Case, run_cases

    def loops(impl):
        while impl():
            pass

    def returns(impl):
        assert impl() in (True, False)

    # each case's own limit, 2 s: the first loop runs to it, the one after it to a tenth of it
    cases = [Case("fine", returns, time_limit=2.0)] + [Case(f"loop {i}", loops, time_limit=2.0) for i in range(2)]
    res = run_cases("looping", cases, lambda: True)
    fine, first, second = res.results
    assert fine.passed and not fine.timed_out
    assert first.timed_out and "did not finish within 2 s" in first.message, first.message
    assert "a case before this one" not in first.message
    assert second.timed_out and f"did not finish within {2.0 * AFTER_A_TIMEOUT:g} s" in second.message, second.message
    assert "a case before this one ran past its limit" in second.message
    # a limit given for the whole grading (the mutation suite's TIME_LIMIT) stays as it is
    again = run_cases("looping", cases[1:], lambda: True, time_limit=0.3)
    assert all(r.timed_out and "within 0.3 s" in r.message for r in again.results), again.report()


def test_time_limit_gives_an_armed_timer_back():
    import signal

    from minisgl_edu.grading.limits import time_limit, untimed

    def handler(*args):
        pass

    outer = signal.setitimer(signal.ITIMER_REAL, 0)  # pytest-timeout's timer, if any: put back below
    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 100.0)
        with time_limit(50.0):
            with untimed():
                assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # paused
            assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 50.0
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100.0  # the old timer runs again
        assert signal.getsignal(signal.SIGALRM) is handler
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer[0]:
            signal.setitimer(signal.ITIMER_REAL, *outer)


def test_a_time_out_swallowed_once_comes_again():
    """A CaseTimeout raised inside a gc callback is printed and dropped by the interpreter (hypothesis
    keeps one); the loop it interrupted must still be stopped, and nothing may fire after the case."""
    import time

    from minisgl_edu.grading.limits import CaseTimeout, time_limit

    swallowed = 0
    with pytest.raises(CaseTimeout):
        with time_limit(0.2):
            while True:
                try:
                    while True:
                        pass
                except CaseTimeout:
                    swallowed += 1  # dropped, as the interpreter drops it in a gc callback
                    if swallowed == 3:
                        break
            while True:  # the fourth alarm must stop this loop too
                pass
    assert swallowed == 3
    time.sleep(0.3)  # no alarm left: a stray CaseTimeout would be raised here


def test_feedback_names_the_students_line_not_the_package():
    from minisgl_edu.kvcache import OutOfPages

    class FreesBadly:
        def __init__(self, n):
            self.free_list = list(range(n))
            self.used = set()

        @property
        def num_free(self):
            return len(self.free_list)

        def allocate(self, n):
            if n > len(self.free_list):
                raise OutOfPages("no")
            pages = [self.free_list.pop() for _ in range(n)]
            self.used.update(pages)
            return pages

        def free(self, pages):
            for p in pages:
                self.used.remove(p)  # KeyError on a double free, instead of ValueError
                self.free_list.append(p)

    res = grade("allocator", FreesBadly, only=["double free"])
    (r,) = res.results
    assert not r.passed and "raised KeyError" in r.message and "self.used.remove(p)" in r.message, r.message
    assert r.where.startswith(__file__)


def test_a_failed_check_reports_its_own_hint_not_the_cases():
    from minisgl_edu.grading.core import Case, expect, hinted, run_case

    def two_checks(impl):
        got = impl()
        expect(got[0] == 1, f"first is {got[0]}, expected 1", hint="look at the first")
        with hinted("look at the second"):
            expect(got[1] == 2, f"second is {got[1]}, expected 2")

    case = Case("two checks", two_checks, hint="the case's hint")
    first = run_case(case, lambda: (0, 2))
    second = run_case(case, lambda: (1, 0))
    assert (first.passed, first.message, first.hint) == (False, "first is 0, expected 1", "look at the first")
    assert (second.passed, second.message, second.hint) == (False, "second is 0, expected 2", "look at the second")
    assert run_case(case, lambda: (1, 2)).passed

    def crashes(impl):
        impl()

    def student_asserts():
        assert False, "mine"

    # a crash in the student's code: its cause first, then the case's hint (a check without a hint of
    # its own: the case's hint alone)
    crash = run_case(Case("c", crashes, hint="the case's hint"), lambda: 1 / 0)
    assert crash.hint == "a division by zero: in this case the divisor is 0. The case: the case's hint"
    bare = run_case(Case("c", lambda impl: expect(impl(), "no"), hint="the case's hint"), lambda: 0)
    assert (bare.message, bare.hint) == ("no", "the case's hint")
    with pytest.raises(AssertionError) as raised:  # the student's own assert keeps its type and line
        with hinted("not for this"):
            student_asserts()
    assert type(raised.value) is AssertionError


def _stop_window(stop: list[str]) -> int:
    return max(len(s) for s in stop)


def _send_one(send, msg) -> None:
    send(msg)


def _free(by_start: dict, start: int) -> int:
    return by_start.pop(start)


def _refuse(in_use: set, page: int) -> None:
    if page not in in_use:
        raise ValueError(f"page {page} freed twice")


@pytest.mark.parametrize(
    "crash, cause",
    [
        (lambda: _stop_window([]), "max() or min() of nothing"),
        (lambda: _send_one(QueueIO().send, 3), "send() goes through what it is given item by item"),
        (lambda: [x for x in 3], "a loop: pass it a list"),
        (lambda: _free({}, 8), "the key 8 is not there when this line runs"),
        (
            lambda: _refuse(set(), 0),
            "your own check refused a call the contract allows (ValueError: page 0 freed twice)",
        ),
        (lambda: [][0], "an index past the end"),
        (lambda: torch.softmax(torch.zeros(3), dim=1), "a dimension the tensor does not have"),
        (lambda: None.pages, "a value is None here"),
        (lambda: "one two".index("xyz"), "str.index() raises ValueError when the text is not there"),
        (lambda: torch.log(0.5), "a torch function was given a Python float where it takes a tensor"),
        (lambda: torch.zeros(3)[torch.tensor([0.0])], "a tensor used as an index must hold integers or booleans"),
        (lambda: torch.zeros(3) + torch.zeros(4), "two tensors of different shapes combined: sizes 3 and 4"),
        (lambda: [1].remove(3), "list.index() and list.remove() raise ValueError"),
        (lambda: {(): 0}[[1]], "a list cannot be a dict key"),
        (
            lambda: torch.bincount(torch.tensor([])),
            "torch's bincount() has no kernel for Float numbers: torch.tensor() of an empty list",
        ),
        (lambda: int("x"), "your code raised ValueError: invalid literal for int()"),
    ],
)
def test_a_crash_in_the_students_code_leads_the_hint_with_its_cause(crash, cause):
    """A case stopped by the student's own exception: the hint starts with what that exception says
    about their code, not with the case's hint, which was written for a mistake its checks look for."""
    from minisgl_edu.grading.core import Case, expect, run_case

    res = run_case(Case("c", lambda impl: impl(), hint="the scene"), crash)
    assert res.hint.startswith(cause) and res.hint.endswith(". The case: the scene"), res.hint
    assert run_case(Case("c", lambda impl: expect(False, "no", hint="its own")), crash).hint == "its own"


def _count(ids: list[int]):
    return torch.bincount(torch.tensor(ids))


def test_torchs_not_implemented_is_a_crash_not_a_stub():
    """torch raises NotImplementedError for an operation it has no kernel for on a dtype; only the
    student's own `raise NotImplementedError` is the stub not written yet."""
    from minisgl_edu.grading.core import Case, run_case

    def stub():
        raise NotImplementedError

    assert run_case(Case("c", lambda impl: impl()), stub).message.startswith("not implemented yet")
    res = run_case(Case("c", lambda impl: impl([])), _count)
    assert res.message.startswith("your code raised NotImplementedError"), res.message
    assert "torch.tensor() of an empty list makes a float tensor" in res.hint


def test_a_crash_inside_the_engine_is_not_blamed_on_a_student_line():
    from types import SimpleNamespace

    from minisgl_edu.grading.feedback import explain
    from minisgl_edu.kvcache.page_table import PageTable

    try:
        PageTable.alloc_row(SimpleNamespace(_free_rows=[]))
    except RuntimeError as e:
        e.__traceback__ = e.__traceback__.tb_next  # keep only the package's frames, as after a step()
        fb = explain(e)
    assert fb.message == "after your code ran, the engine failed in alloc_row(): RuntimeError: no free page-table row"
    assert fb.where is None


# --- the shell grader -------------------------------------------------------------------------------


def _notebook(tmp_path, cells: list[str]) -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    path = tmp_path / "student.ipynb"
    nbformat.write(nb, path)
    return str(path)


def _solution_cells(name: str) -> tuple[str, list[str]]:
    """The import cell and the solution cells of the solution notebook of exercise `name`."""
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        if any(f'check("{name}"' in c for c in cells):
            return [c for c in cells if "import" in c][0], [c for c in cells if "### BEGIN SOLUTION" in c]
    raise LookupError(name)


@pytest.mark.slow
@_mark("allocator")
def test_shell_grader_runs_a_check_in_the_same_cell_as_the_solution(tmp_path, capsys):
    from minisgl_edu.grading.__main__ import main

    imports, solution = _solution_cells("allocator")
    same_cell = "\n".join(solution) + '\nresult = check("allocator", PageAllocator)\nassert result.full_marks\n'
    path = _notebook(tmp_path, [imports, "raise RuntimeError('a cell that fails is skipped')", same_cell])
    total = len(exercise("allocator").CASES)
    assert main([path]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"


def test_shell_grader_runs_a_cell_that_defines_a_dataclass(tmp_path, capsys):
    """A @dataclass looks its module up in sys.modules: the student's namespace must be a module."""
    from minisgl_edu.grading.__main__ import main

    imports, solution = _solution_cells("allocator")
    with_dataclass = (
        "from __future__ import annotations\nfrom dataclasses import dataclass\n\n@dataclass\nclass Note:\n    text: str = ''\n\n"
        + "\n".join(solution)
    )
    path = _notebook(tmp_path, [imports, with_dataclass, 'check("allocator", PageAllocator)'])
    total = len(exercise("allocator").CASES)
    assert main([path]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"


@pytest.mark.slow
@_mark("allocator")
@_mark("allocator_contiguous")
def test_shell_grader_on_the_exercise_and_solution_notebooks(capsys):
    from minisgl_edu.grading.__main__ import main

    total = len(exercise("allocator").CASES) + len(exercise("allocator_contiguous").CASES)  # base part and stretch
    assert main(["solutions/04_page_allocator.ipynb"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: {total}/{total}"
    assert main(["exercises/04_page_allocator.ipynb"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"score: 0/{total}"


def test_exercises_are_in_sync_with_solutions():
    from minisgl_edu.course.exercises import build

    assert build(ROOT / "solutions", ROOT / "exercises", check=True) == []


def _engine_answer():
    from minisgl_edu.grading.schedule.checks import ENGINE_ANSWER

    return ENGINE_ANSWER


@pytest.mark.exercise_schedule
@pytest.mark.parametrize("method", _engine_answer(), ids=lambda m: m.__name__)
def test_the_schedulers_own_methods_are_hidden_from_an_answer(method):
    """Exercise 5's answer may not reach the scheduler's own decision through the scheduler object
    (the own-code rule cannot see that): each such method, named by reference and so by its current
    name, fails the answer that calls it, with a message that names it."""
    from minisgl_edu.scheduler import Scheduler

    assert getattr(Scheduler, method.__name__) is method
    grader = exercise("schedule")

    def answer(scheduler):
        getattr(scheduler, method.__name__)()  # a hidden method raises whatever it is given
        return None

    unit = [c.name for c in grader.CASES if c.hand_unit]
    res = grade("schedule", answer, only=unit)
    said = [r.message for r in res.results if not r.passed and f"scheduler.{method.__name__}()" in r.message]
    assert len(said) == len(unit), res.report()
