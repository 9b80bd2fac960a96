"""Grading a wrong answer in a test, paying for shrinking only where the test reads its result.

A plain module, not a test file: tests/test_grading_mutants.py and tests/test_grading_logits_chain.py
import it. Whether a case fails does not depend on shrinking (grading/explore.py): a generated case
fails as soon as one scene differs; shrinking only chooses the scene its message shows, and the
hint read from that scene. A test that asks "which cases fail?" and "do the hand cases' messages
say X?" needs no shrinking; only words looked for in a generated case's message do. So the answer
is graded without shrinking first (the first scene that differs is reported as found), and the
generated cases that failed are graded again, shrunk as a student sees them, only when the words
the test looks for are not in the hand cases' feedback.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import pytest

from minisgl_edu.grading import exercise, explore, grade
from minisgl_edu.grading.core import CaseResult, GradeResult


def _grade(name: str, impl: Any, only: list[str], time_limit: Optional[float], shrink: bool) -> GradeResult:
    with pytest.MonkeyPatch.context() as mp:
        if not shrink:
            mp.setattr(explore, "SHRINK_PLAYS", 0)  # the first scene that differs, as found
        return grade(name, impl, only=only, time_limit=time_limit)


def failed_cases(
    name: str,
    impl: Any,
    only: list[str],
    says: Callable[[list[CaseResult]], bool],
    time_limit: Optional[float] = None,
) -> tuple[GradeResult, dict[str, CaseResult]]:
    """Grade `impl` on the cases `only`; return the unshrunk result and the failed cases by name,
    the generated ones shrunk when `says` (a test on the failed hand cases) is False."""
    res = _grade(name, impl, only, time_limit, shrink=False)
    failed = {r.name: r for r in res.results if not r.passed}
    generated = {c.name for c in exercise(name).CASES if c.generated}
    again = [n for n in failed if n in generated]
    if again and not says([r for n, r in failed.items() if n not in generated]):
        failed.update({r.name: r for r in _grade(name, impl, again, time_limit, shrink=True).results})
    return res, failed
