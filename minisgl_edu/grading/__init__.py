"""Graders for the course's exercises: `check(name, impl)` in a notebook, or from the shell:

    python -m minisgl_edu.grading exercises/02_abort.ipynb

Each exercise module has `CASES` (plain functions that raise on a wrong answer), the `SYMBOL`
the notebook defines, the package's own `SOLUTION` and, optional, `REFERENCES` (more package
objects that count as the answer; own_code.py). The student's object must be their own:
`grade(name, mod.SOLUTION)` fails every case, `grade(name, mod.SOLUTION, allow_reference=True)`
gets full marks (that is how the tests check the graders themselves).
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable, Optional

from minisgl_edu.grading.core import Case, CaseResult, GradeResult, run_cases
from minisgl_edu.grading.own_code import references

EXERCISES = {
    "finish": "minisgl_edu.grading.finish.base",
    "finish_min_tokens": "minisgl_edu.grading.finish.min_tokens",
    "abort": "minisgl_edu.grading.abort.base",
    "abort_to_cache": "minisgl_edu.grading.abort.to_cache",
    "detokenizer": "minisgl_edu.grading.detokenizer.base",
    "detokenizer_include_stop": "minisgl_edu.grading.detokenizer.include_stop",
    "allocator": "minisgl_edu.grading.allocator.base",
    "allocator_contiguous": "minisgl_edu.grading.allocator.contiguous",
    "schedule": "minisgl_edu.grading.schedule.base",
    "schedule_lpm": "minisgl_edu.grading.schedule.lpm",
    "prefix_cache": "minisgl_edu.grading.prefix_cache.base",
    "prefix_cache_lfu": "minisgl_edu.grading.prefix_cache.lfu",
    "logits_chain": "minisgl_edu.grading.logits_chain.base",
    "logits_chain_min_p": "minisgl_edu.grading.logits_chain.min_p",
    "verify": "minisgl_edu.grading.verify.base",
}


def exercise(name: str):
    if name not in EXERCISES:
        raise KeyError(f"unknown exercise {name!r}; choose from {sorted(EXERCISES)}")
    return importlib.import_module(EXERCISES[name])


def grade(
    name: str,
    impl: Any,
    *,
    allow_reference: bool = False,
    time_limit: Optional[float] = None,
    only: Optional[Iterable[str]] = None,
) -> GradeResult:
    """Run exercise `name`'s cases on `impl` (only those named in `only`, if given)."""
    mod = exercise(name)
    cases = mod.CASES if only is None else [c for c in mod.CASES if c.name in set(only)]
    return run_cases(
        name, cases, impl, reference=references(mod), allow_reference=allow_reference, time_limit=time_limit
    )


def check(name: str, impl: Any) -> GradeResult:
    """Run every case of exercise `name` on `impl`, print ✓/✗ per case and the score."""
    result = grade(name, impl)
    print(result.report())
    return result


__all__ = ["Case", "CaseResult", "EXERCISES", "GradeResult", "check", "exercise", "grade"]
