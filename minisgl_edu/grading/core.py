"""The grader's machinery: cases, `check()`, and the score line.

Where this sits in the course: each exercise notebook ends with `check("abort", abort_request)`.
`check` runs every case of that exercise against the student's code and prints one line per
case (✓ or ✗ with a hint) and `score: X/Y`. The same cases run from the shell
(`python -m minisgl_edu.grading notebook.ipynb`) and from pytest for instructors.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Case:
    name: str
    run: Callable[[Any], None]  # raises AssertionError (or anything) when the student's code is wrong
    hint: str


@dataclass
class CaseResult:
    name: str
    passed: bool
    message: str = ""
    hint: str = ""


@dataclass
class GradeResult:
    exercise: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def full_marks(self) -> bool:
        return self.score == self.total

    def report(self) -> str:
        lines = [f"exercise {self.exercise}"]
        for r in self.results:
            mark = "✓" if r.passed else "✗"
            lines.append(f"  {mark} {r.name}")
            if not r.passed:
                lines.append(f"      {r.message}")
                lines.append(f"      hint: {r.hint}")
        lines.append(f"score: {self.score}/{self.total}")
        return "\n".join(lines)


def run_cases(exercise: str, cases: list[Case], impl: Any) -> GradeResult:
    result = GradeResult(exercise)
    for case in cases:
        try:
            case.run(impl)
        except NotImplementedError:
            result.results.append(CaseResult(case.name, False, "not implemented yet", case.hint))
        except AssertionError as e:
            result.results.append(CaseResult(case.name, False, str(e) or "a check failed", case.hint))
        except Exception as e:  # the student's code crashed: show where, briefly
            where = traceback.extract_tb(e.__traceback__)[-1]
            msg = f"{type(e).__name__}: {e} (line {where.lineno} of {where.name})"
            result.results.append(CaseResult(case.name, False, msg, case.hint))
        else:
            result.results.append(CaseResult(case.name, True))
    return result
