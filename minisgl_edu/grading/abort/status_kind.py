"""The type of the status an abort writes, shared by exercise 2 and its stretch.

Where this sits: checks.py's `check_marked`, `check_marked_where` and `run_scheduled` (the
hand-written cases) ask `check_status_kind` before they compare the status with FINISHED; scenes.py
records the status with `shown` and names a wrong one with `status_hint`. `ReqStatus` is a plain
Enum, so a status written as the string its member prints as (`req.status = "finished"`) is not
equal to `ReqStatus.FINISHED`: `req.is_finished` stays False and a batch chosen before the abort
still runs the request. The message shows such a value with its quotes, never printed like the
enum member, so that it does not read "not marked finished (req.status is finished)".
"""

from __future__ import annotations

from typing import Any, Callable

from minisgl_edu.core import ReqStatus
from minisgl_edu.grading.core import Mistake


def not_the_enum_hint(written: str) -> str:
    """The hint for a request whose status is no ReqStatus member; `written`: that value's repr."""
    return (
        f"req.status is {written}, not the enum member ReqStatus.FINISHED: ReqStatus is a plain Enum, and a "
        f"member is not equal to its value or its name ({written} != ReqStatus.FINISHED), so req.is_finished "
        "stays False and run_batch() still runs the request. Assign the member itself: "
        "req.status = ReqStatus.FINISHED"
    )


def check_status_kind(req: Any) -> None:
    """The aborted request's status is a ReqStatus member (which one is checked by the caller)."""
    status = req.status
    if isinstance(status, ReqStatus):
        return
    raise Mistake(
        f"the aborted request's status is {status!r}, a {type(status).__name__}, not a ReqStatus: "
        "req.is_finished compares req.status with ReqStatus.FINISHED, which is False for any other value, so "
        "the request is not marked finished and a batch scheduled before the abort still runs it",
        not_the_enum_hint(repr(status)),
    )


def shown(status: Any) -> str:
    """A status as a generated scene records it: the member's name, or any other value's repr."""
    return status.name if isinstance(status, ReqStatus) else repr(status)


def status_hint(otherwise: str) -> Callable[[Any, Any], str]:
    """The generated phase's hint when the aborted request's (status, finish_reason) differs:
    `otherwise` unless the status recorded is no ReqStatus member."""

    def hint(scene: Any, diff: Any) -> str:
        got = diff.got  # (shown(req.status), req.finish_reason), or a line when there was no such request
        if isinstance(got, tuple) and got and got[0] not in ReqStatus.__members__:
            return not_the_enum_hint(got[0])
        return otherwise

    return hint
