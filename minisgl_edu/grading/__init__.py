"""Graders for the course's exercises: `check(name, impl)` in a notebook, or from the shell:

    python -m minisgl_edu.grading exercises/02_abort.ipynb

Each exercise module has `CASES` (plain functions that raise on a wrong answer), the `SYMBOL`
the notebook defines, and the package's own `SOLUTION`, which must get full marks.
"""

from __future__ import annotations

import importlib
from typing import Any

from minisgl_edu.grading.core import Case, CaseResult, GradeResult, run_cases

EXERCISES = {
    "finish": "minisgl_edu.grading.finish",
    "abort": "minisgl_edu.grading.abort",
    "detokenizer": "minisgl_edu.grading.detokenizer",
    "allocator": "minisgl_edu.grading.allocator",
}


def exercise(name: str):
    if name not in EXERCISES:
        raise KeyError(f"unknown exercise {name!r}; choose from {sorted(EXERCISES)}")
    return importlib.import_module(EXERCISES[name])


def grade(name: str, impl: Any) -> GradeResult:
    return run_cases(name, exercise(name).CASES, impl)


def check(name: str, impl: Any) -> GradeResult:
    """Run every case of exercise `name` on `impl`, print ✓/✗ per case and the score."""
    result = grade(name, impl)
    print(result.report())
    return result


__all__ = ["Case", "CaseResult", "EXERCISES", "GradeResult", "check", "exercise", "grade"]
