"""Grade one student notebook: run its cells, then grade every exercise its `check(...)` calls name.

Where this sits in the course: the shell grader (`python -m minisgl_edu.grading`, `__main__.py`)
calls `grade_notebook` for each notebook, in its own process, or through `sandbox.py` in a child
process with limits. The result, a `NotebookGrade`, holds the same `GradeResult`s that `check()`
prints in the notebook, so the shell shows the student the same ✓/✗ lines, messages and hints.

A `NotebookGrade` also travels as JSON lines (one per case): that is how the sandboxed child
hands its result to the batch grader, and what `--json` prints for instructors.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import linecache
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import minisgl_edu.grading as grading
from minisgl_edu.grading import EXERCISES, exercise, grade
from minisgl_edu.grading.core import CaseResult, GradeResult
from minisgl_edu.grading.limits import CaseTimeout, time_limit

CHECK_CALL = re.compile(r"""check\(\s*["'](\w+)["']""")
CELL_LIMIT = 300.0  # seconds per cell; generous: a cell may load the model or run a benchmark


@dataclass
class NotebookGrade:
    """Every exercise graded in one notebook. `problem` says why a notebook got no case results
    (no `check(...)` call, or its grading process was stopped)."""

    notebook: str
    grades: list[GradeResult] = field(default_factory=list)
    problem: str = ""

    @property
    def score(self) -> int:
        return sum(g.score for g in self.grades)

    @property
    def total(self) -> int:
        return sum(g.total for g in self.grades)

    def report(self) -> str:
        """What the student reads: for each exercise, exactly what `check()` prints."""
        lines = [f"== {self.notebook}"]
        if self.problem:
            lines.append(f"  {self.problem}")
        lines += [g.report() for g in self.grades]
        return "\n".join(lines)


# --- running the cells -----------------------------------------------------------------------------


def _source(cell) -> str:
    # IPython magics and shell escapes are not Python; the grader needs none of them
    return "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))


def _code_cells(path: str) -> list:
    import nbformat

    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def exercises_named(path: str) -> list[str]:
    """The exercises that the notebook's `check("<name>", ...)` calls name, read from its source
    without running anything (the batch grader uses it to score a notebook whose run was stopped)."""
    names: list[str] = []
    for cell in _code_cells(path):
        names += [m for m in CHECK_CALL.findall(cell.source) if m in EXERCISES and m not in names]
    return names


def notebook_namespace(path: str) -> tuple[dict, list[str], dict[str, Any]]:
    """Run the notebook's code cells; return their globals, the exercises its `check(...)` calls
    name (called, or only written in a cell that failed first), and the object each call passed."""
    # A real module for the student's globals: a @dataclass defined in a cell looks its class's
    # module up in sys.modules, as it would in a notebook kernel's __main__.
    module = types.ModuleType("__student__")
    sys.modules[module.__name__] = module
    ns: dict = module.__dict__
    names: list[str] = []
    passed: dict[str, Any] = {}

    def recording_check(name, impl=None, *args, **kwargs):
        if name not in names:
            names.append(name)
        passed[name] = impl

    real_check = grading.check
    grading.check = recording_check  # `from minisgl_edu.grading import check` now gets the recorder
    try:
        for n, cell in enumerate(_code_cells(path)):
            src = _source(cell)
            filename = f"{path} [code cell {n + 1}]"
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # lines in feedback
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    with time_limit(CELL_LIMIT):
                        exec(compile(src, filename, "exec"), ns)
                except (Exception, SystemExit, CaseTimeout):
                    pass  # an unfinished stub, or a cell that needs something the grader does not run
            names += [m for m in CHECK_CALL.findall(src) if m not in names]
    finally:
        grading.check = real_check
    return ns, [n for n in names if n in EXERCISES], passed


def not_graded(name: str, message: str) -> GradeResult:
    """Every case of exercise `name` failed with one `message` (nothing to grade, or no result)."""
    return GradeResult(name, [CaseResult(case.name, False, message) for case in exercise(name).CASES])


def grade_notebook(path: str) -> NotebookGrade:
    """Run the notebook's cells, then grade each exercise it names on the symbol that exercise
    expects, as the cells left it."""
    ns, names, passed = notebook_namespace(path)
    result = NotebookGrade(path)
    if not names:
        result.problem = 'no check("<exercise>", ...) call found'
    for name in names:
        mod = exercise(name)
        impl = ns.get(mod.SYMBOL, passed.get(name))
        if impl is None:
            result.grades.append(not_graded(name, f"{mod.SYMBOL} is not defined"))
        else:
            result.grades.append(grade(name, impl))
    return result


# --- as JSON lines ------------------------------------------------------------------------------------


def to_records(result: NotebookGrade, **extra) -> list[dict]:
    """One dict per case (and one with `case: None` for a notebook without any), each carrying
    the exercise's score so that a reader of any line sees where the student stands."""
    if not result.grades:
        return [dict(extra, notebook=result.notebook, exercise=None, case=None, passed=False, message=result.problem)]
    records = []
    for g in result.grades:
        for r in g.results:
            case = dataclasses.asdict(r)
            head = dict(extra, notebook=result.notebook, exercise=g.exercise, case=case.pop("name"))
            records.append({**head, **case, "score": g.score, "total": g.total})
    return records


def from_records(notebook: str, records: Iterable[dict]) -> Optional[NotebookGrade]:
    """The `NotebookGrade` that `to_records` wrote (None if `records` is not such a list)."""
    result = NotebookGrade(notebook)
    by_exercise: dict[str, GradeResult] = {}
    known = {f.name for f in dataclasses.fields(CaseResult)}
    try:
        for rec in records:
            if rec["exercise"] is None:
                result.problem = str(rec["message"])
                continue
            fields = {k: v for k, v in rec.items() if k in known}
            fields["name"] = rec["case"]
            g = by_exercise.setdefault(rec["exercise"], GradeResult(rec["exercise"]))
            g.results.append(CaseResult(**fields))
    except (KeyError, TypeError):
        return None
    result.grades = list(by_exercise.values())
    return result
