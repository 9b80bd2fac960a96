"""What a failed case tells the student: their mistake, in their own code, never a package internal.

Where this sits in the course: `run_cases` (core.py) catches whatever a case raised and asks
`explain()` for the line the student reads. Three kinds of failure:

* the grader's own check failed (an AssertionError raised in `minisgl_edu/grading/`): its message
  already says what the student's code did wrong;
* the student's code raised, maybe deep inside a package function it called: we name the deepest
  frame that is the student's (file and line), not the package frame below it;
* the engine failed after the student's code ran (e.g. a freed request left in a batch): we say
  so, and which engine function failed, so that it is not mistaken for a bug in their code.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import Optional

import minisgl_edu
from minisgl_edu.grading.crash_frames import frame_words
from minisgl_edu.grading.limits import CaseTimeout
from minisgl_edu.grading.python_errors import python_words

PACKAGE_DIR = os.path.dirname(os.path.abspath(minisgl_edu.__file__))
GRADING_DIR = os.path.join(PACKAGE_DIR, "grading")
_LIBRARY_DIRS = tuple(
    {
        os.path.abspath(p)
        for k, p in sysconfig.get_paths().items()
        if k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


def is_student_file(filename: str) -> bool:
    """Code that is neither this package nor Python's or an installed library's: a notebook cell,
    a student's module, a file of the mutation suite."""
    if filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename)
    return not path.startswith(PACKAGE_DIR + os.sep) and not path.startswith(_LIBRARY_DIRS)


def _is_grader_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(GRADING_DIR + os.sep)


def raised_by_grader(exc: BaseException) -> bool:
    """Was `exc` raised in the grader's own code (its innermost frame is in grading/), as a failed
    check is, rather than in the student's code or in the engine?"""
    frames = traceback.extract_tb(exc.__traceback__, limit=-1)
    return bool(frames) and _is_grader_file(frames[-1].filename)


@dataclass
class Feedback:
    message: str
    where: Optional[str] = None  # "file:line" of the student's code it points at, if any


def _exc_text(exc: BaseException) -> str:
    text = str(exc)
    if len(text) > 200:  # a message holding an object's repr (a whole request): its start and its end
        text = f"{text[:80]} ... {text[-60:]}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _at(frame: traceback.FrameSummary) -> str:
    line = f": `{frame.line.strip()}`" if frame.line and frame.line.strip() else ""
    return f"line {frame.lineno} of your {frame.name}{line}"


def is_stub(exc: BaseException) -> bool:
    """Did the student's own line raise NotImplementedError, as the exercise's stub does? torch raises
    it too (an operation it has no kernel for, on that dtype): that is a crash, not a stub."""
    frames = traceback.extract_tb(exc.__traceback__)
    return (
        isinstance(exc, NotImplementedError)
        and bool(frames)
        and is_student_file(frames[-1].filename)
        and _own_check(frames[-1])
    )


def explain(exc: BaseException) -> Feedback:
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if is_student_file(f.filename)]
    last = frames[-1] if frames else None
    where = f"{mine[-1].filename}:{mine[-1].lineno}" if mine else None
    if isinstance(exc, CaseTimeout):
        msg = f"did not finish within {exc.seconds:g} s (an endless loop?)"
        if mine:
            return Feedback(f"{msg}; it was running {_at(mine[-1])}", where)
        return Feedback(f"{msg}; the engine was still running with your code plugged in", None)
    if isinstance(exc, AssertionError) and raised_by_grader(exc):
        msg = str(exc) or "a check failed"
        cause = exc.__cause__  # a check that caught the student's exception names their line
        if cause is not None and not isinstance(cause, AssertionError):
            theirs = [f for f in traceback.extract_tb(cause.__traceback__) if is_student_file(f.filename)]
            if theirs:
                return Feedback(f"{msg} ({_at(theirs[-1])})", f"{theirs[-1].filename}:{theirs[-1].lineno}")
        return Feedback(msg)
    if is_stub(exc):
        return Feedback(f"not implemented yet ({_at(mine[-1])})", where)
    if mine:
        inner = ""
        if last is not None and not is_student_file(last.filename):
            inner = f", inside {last.name}() which your code called"
        return Feedback(f"your code raised {_exc_text(exc)}{inner} ({_at(mine[-1])})", where)
    if raised_by_grader(exc):
        return Feedback(f"the grader could not use what your code returned or built: {_exc_text(exc)}")
    engine_fn = last.name if last is not None else "?"
    return Feedback(f"after your code ran, the engine failed in {engine_fn}(): {_exc_text(exc)}")


def _own_check(frame: traceback.FrameSummary) -> bool:
    line = (frame.line or "").strip()
    return line.startswith(("raise ", "assert "))


def _student_frame(exc: BaseException) -> Optional[FrameType]:
    """The innermost frame of the student's code in `exc`'s traceback: its variables are those of
    the line that failed."""
    frame, tb = None, exc.__traceback__
    while tb is not None:
        if is_student_file(tb.tb_frame.f_code.co_filename):
            frame = tb.tb_frame
        tb = tb.tb_next
    return frame


def crash_cause(exc: BaseException) -> Optional[str]:
    """What a crash in the student's own code says about their mistake, for the hint, or None when
    the exception is not a crash of their code (a failed check, the engine's failure, a time-out, a
    stub not written yet). The hint a case carries was written for the mistakes its checks look
    for; a crash stops the case before any check runs, so that hint alone would send the student
    after a mistake they may not have made. The cause comes first, the case's hint after it."""
    if isinstance(exc, CaseTimeout) or is_stub(exc) or (isinstance(exc, AssertionError) and raised_by_grader(exc)):
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if is_student_file(f.filename)]
    if not mine:
        return None
    last, text = frames[-1], str(exc)
    if last is mine[-1] and _own_check(last):
        return (
            f"your own check refused a call the contract allows ({_exc_text(exc)}): either that check "
            "asks for more than the contract does, or an earlier step of your code left the state it reads wrong"
        )
    words = frame_words(exc, _student_frame(exc)) or python_words(exc)
    if words:
        return words
    if isinstance(exc, ValueError) and ("empty sequence" in text or "argument is empty" in text):
        return (
            "max() or min() of nothing: in this case the sequence is empty (no stop strings, no pages, "
            "no requests, ...); give it a default= or handle the empty case before it"
        )
    if isinstance(exc, TypeError) and "object is not iterable" in text:
        inner = f"{last.name}() goes through what it is given item by item" if last is not mine[-1] else "a loop"
        return f"{inner}: pass it a list (or other sequence) of them, [x], not a single {text.split()[0]}"
    if isinstance(exc, KeyError):
        return (
            f"the key {text} is not there when this line runs: it was never added, was removed already, "
            "or one of your structures still records it after another dropped it; keep every structure "
            "that records an entry in step"
        )
    if isinstance(exc, IndexError) and text.startswith("Dimension out of range"):  # torch's words for a dim
        return (
            "a dimension the tensor does not have: it has fewer dimensions than your code assumes; a "
            "row taken out of a batch, logits[i], is 1-D, so its one dimension is 0 (or -1)"
        )
    if isinstance(exc, IndexError):
        return "an index past the end, or a pop from an empty list: this case reaches a size your code does not expect"
    if isinstance(exc, AttributeError) and "'NoneType'" in text:
        return "a value is None here where your code expects an object (a call that returned nothing?)"
    if isinstance(exc, RuntimeError) and "during iteration" in text and last is mine[-1]:
        # Python's own words for a deque, dict or set that changed while the student's loop went through it
        return (
            f"{text}: your loop removed (or added) an item of the collection it was going through; loop over "
            "a copy of it (for r in list(q)), or find the item first and remove it after the loop"
        )
    if isinstance(exc, ZeroDivisionError):
        return "a division by zero: in this case the divisor is 0"
    return f"your code raised {_exc_text(exc)} on this case's inputs: that line does not hold for them"


def crash_hint(exc: BaseException, hint: str, label: str = "") -> str:
    """The hint for a crash: its cause in the student's code (`crash_cause`) first, then `hint`, the
    grader's own words for this case or scene (after `label`); `hint` alone when the cause is unknown."""
    cause = crash_cause(exc)
    if cause is None:
        return hint
    return f"{cause}. {label}{hint}" if hint else cause
