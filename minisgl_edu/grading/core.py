"""The grader's machinery: cases, `run_cases()`, and the score line.

Where this sits in the course: each exercise notebook ends with `check("abort", abort_request)`.
`check` runs every case of that exercise against the student's code and prints one line per
case (✓ or ✗ with what went wrong) and `score: X/Y`. The same cases run from the shell
(`python -m minisgl_edu.grading notebook.ipynb`) and from pytest for instructors.

Three rules hold for every exercise:

* the graded object must be the student's own (own_code.py): an answer that is, subclasses or
  calls the package's reference fails every case, with one clear message;
* each case runs under a time limit (limits.py), so an endless loop fails that case instead of
  hanging the notebook; the limits are minutes, far above what a correct answer needs anywhere;
* whatever the student's code does (raise, loop, return the wrong type), the grader reports it
  per case and gives a score (feedback.py); it never crashes and never shows a package frame as
  if it were the student's.

A case often checks several things, and each can fail for a different mistake. A case's `hint`
is the fallback; a check that knows its own mistake says so, and its hint is the one reported:

    expect(got == want, f"returned {got}, expected {want}", hint="count the held-back text too")
    with hinted("a stop string may span two tokens: search the new text with the tail before it"):
        check_stops(...)  # any AssertionError raised inside carries this hint

Both raise `Mistake` (an AssertionError with a `hint`); `run_case` reports the hint of the
exception it caught when it has one, else the case's. A case stopped by a crash in the student's
own code (an exception raised there, not a failed check) gets the crash's cause first and the
case's hint after it (`feedback.crash_hint`): the case's hint alone would name a mistake that
its checks never reached. `expect` builds its message before it
checks: a message that only makes sense on failure (`bad[0]`) goes in `if bad: raise Mistake(...)`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence, Union

from minisgl_edu.grading.feedback import crash_hint, explain, raised_by_grader
from minisgl_edu.grading.limits import CaseTimeout, time_limit
from minisgl_edu.grading.own_code import not_own_code

UNIT_LIMIT = 60.0  # seconds; a correct unit case takes milliseconds
ENGINE_LIMIT = 300.0  # a few short requests on the real model (model loading is not counted)
# Once a case ran past its limit, the answer most likely loops and would loop in the next cases too:
# each later case gets this share of its limit, still far above what a right answer needs.
AFTER_A_TIMEOUT = 0.1


class Mistake(AssertionError):
    """A failed check that names its own mistake: `hint` replaces the case's hint in the report."""

    def __init__(self, message: str = "", hint: str = ""):
        super().__init__(message)
        self.hint = hint


def expect(condition: Any, message: str, hint: str = "") -> None:
    """`assert condition, message`, with the hint for this check's mistake."""
    if not condition:
        raise Mistake(message, hint)


@contextmanager
def hinted(hint: str) -> Iterator[None]:
    """Every AssertionError raised inside the block (a check, or a helper's checks) carries `hint`,
    unless it already carries its own (a Mistake raised inside keeps its hint)."""
    try:
        yield
    except Mistake as e:
        if not e.hint:
            e.hint = hint
        raise
    except AssertionError as e:
        if not raised_by_grader(e):
            raise  # the student's own assert: feedback.py names their line
        raise Mistake(str(e), hint).with_traceback(e.__traceback__) from e.__cause__


@dataclass
class Case:
    name: str
    run: Callable[[Any], None]  # raises AssertionError (or anything) when the student's code is wrong
    hint: str = ""  # where to look; the failure message itself says what went wrong
    engine: bool = False  # runs the real model (slow to start: only cases that need it)
    time_limit: Optional[float] = None  # None: UNIT_LIMIT, or ENGINE_LIMIT for engine cases
    generated: bool = False  # a case of the generated phase (explore.py), not a hand-written one

    @property
    def hand_unit(self) -> bool:
        """A hand-written case that needs no model: what must pass before an engine case runs."""
        return not self.engine and not self.generated

    @property
    def limit(self) -> float:
        return self.time_limit or (ENGINE_LIMIT if self.engine else UNIT_LIMIT)


@dataclass
class CaseResult:
    name: str
    passed: bool
    message: str = ""
    hint: str = ""
    where: Optional[str] = None  # "file:line" of the student's code the message points at
    timed_out: bool = False  # ran past its time limit


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
            lines.append(f"  {'✓' if r.passed else '✗'} {r.name}")
            if not r.passed:
                lines.append("      " + r.message.replace("\n", "\n      "))
                if r.hint:
                    lines.append(f"      hint: {r.hint}")
        lines.append(f"score: {self.score}/{self.total}")
        return "\n".join(lines)


SHAPE_HINT = "define the exercise's name as the kind of object the cell's stub is (a function or a class)"
OWN_CODE_HINT = (
    "the grader grades your own code: write the answer without calling, subclassing or keeping the "
    "package's answer (the exercise's text says which of its helpers you may use)"
)


def _wrong_shape(impl: Any, reference: Any) -> Optional[str]:
    if isinstance(reference, type):
        if not isinstance(impl, type):
            return f"expected a class (the grader builds it like {reference.__name__}(...)), got {type(impl).__name__}"
    elif not callable(impl) or isinstance(impl, type):
        return f"expected a function, got {'a class' if isinstance(impl, type) else type(impl).__name__}"
    return None


def run_case(case: Case, impl: Any, limit: Optional[float] = None) -> CaseResult:
    try:
        with time_limit(limit or case.limit):
            case.run(impl)
    except (Exception, SystemExit, CaseTimeout) as e:  # KeyboardInterrupt still stops the grader
        fb = explain(e)
        hint = getattr(e, "hint", "") or crash_hint(e, case.hint, "The case: ")
        return CaseResult(case.name, False, fb.message, hint, fb.where, timed_out=isinstance(e, CaseTimeout))
    return CaseResult(case.name, True)


def run_cases(
    exercise: str,
    cases: list[Case],
    impl: Any,
    reference: Union[Any, Sequence[Any]] = None,
    allow_reference: bool = False,
    time_limit: Optional[float] = None,
) -> GradeResult:
    """Grade `impl` on `cases`. `reference` is the package's answer, one object or a list of them
    (the first is the one whose shape `impl` must have: a function or a class): an `impl` that uses
    any of them fails every case (unless `allow_reference`, for checking the reference itself).
    `time_limit` overrides every case's limit; without it, the cases after one that ran past its limit
    get AFTER_A_TIMEOUT of theirs, so that an answer that loops costs one full limit, not one per case."""
    result = GradeResult(exercise)
    refs = list(reference) if isinstance(reference, (list, tuple)) else [] if reference is None else [reference]
    problem = _wrong_shape(impl, refs[0]) if refs else None
    hint = SHAPE_HINT
    if problem is None and refs and not allow_reference:
        problem, hint = not_own_code(impl, refs), OWN_CODE_HINT
    looped = False
    for case in cases:
        if problem:  # the rule it breaks is not the case's: its own hint, not the case's
            result.results.append(CaseResult(case.name, False, problem, hint))
            continue
        limit = time_limit or (case.limit * AFTER_A_TIMEOUT if looped else None)
        r = run_case(case, impl, limit)
        if r.timed_out and looped and not time_limit:
            r.message += (
                f" (a case before this one ran past its limit, so this one had {AFTER_A_TIMEOUT:.0%} of its own)"
            )
        looped = looped or r.timed_out
        result.results.append(r)
    return result
