"""What the variables of the failing line say about a crash, where Python's message alone cannot.

Where this sits in the course: `feedback.crash_cause()` turns a crash of the student's code into a
hint. Some messages fit several mistakes: "cannot unpack non-iterable int object", "x is not in
deque", "cannot access free variable 'req'", a boolean mask that "does not match the shape of the
indexed tensor". The frame of the student's function that raised still holds its variables, so each
rule here reads them to confirm one mistake (the loop goes over a dict; the item sits in another
queue; the lambda's own parameter has another name; the mask has another tensor's shape) and says
nothing (None) when they do not confirm it: the caller then falls back to Python's own words.
"""

from __future__ import annotations

import linecache
import re
from collections import deque
from types import FrameType
from typing import Any, Optional

_MISSING = object()
_QUEUES = (list, deque)


def _line(frame: FrameType) -> str:
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()


def _lookup(expr: str, frame: FrameType) -> Any:
    """The value of a plain dotted name (`sp.logit_bias`) in the frame, or _MISSING. Names and
    attributes only: nothing is called, so reading it cannot change the student's state."""
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", expr):
        return _MISSING
    head, *rest = expr.split(".")
    value = frame.f_locals.get(head, frame.f_globals.get(head, _MISSING))
    for name in rest:
        if value is _MISSING:
            break
        value = getattr(value, name, _MISSING)
    return value


def _holds(queue: Any, item: Any) -> bool:
    return isinstance(queue, _QUEUES) and any(x is item for x in queue)


def _holders(item: Any, frame: FrameType, skip: Any) -> list[str]:
    """The lists and deques in reach of the frame (a variable, or an attribute of one) that hold `item`."""
    found = []
    for name, value in frame.f_locals.items():
        if value is not skip and _holds(value, item):
            found.append(name)
        for attr, inner in getattr(value, "__dict__", {}).items():
            if inner is not skip and _holds(inner, item):
                found.append(f"{name}.{attr}")
    return found


def _not_in_queue(exc: BaseException, frame: FrameType) -> Optional[str]:
    """q.remove(x) or q.index(x) for an x that q does not hold: say where x is instead."""
    if not isinstance(exc, ValueError) or not re.search(r"not in (list|deque)$", str(exc)):
        return None
    call = re.search(r"([\w.]+)\.(remove|index)\(([\w.]+)\)", _line(frame))
    if not call:
        return None
    where, method, what = call.groups()
    queue, item = _lookup(where, frame), _lookup(what, frame)
    if queue is _MISSING or item is _MISSING or _holds(queue, item):
        return None
    others = [name for name in _holders(item, frame, queue) if name != what]
    if others:
        return (
            f"{what} is not in {where} when {where}.{method}({what}) runs: it is in {' and '.join(others)}. "
            f"The test before this line and the queue it changes must name the same queue"
        )
    return (
        f"{what} is not in {where} when {where}.{method}({what}) runs (removed already? never added?): "
        f"test `{what} in {where}` first"
    )


def _name_without_value(exc: BaseException, frame: FrameType) -> Optional[str]:
    """A name with no value on this line: name the ones this function is given (its parameters)."""
    found = re.search(r"'(\w+)'", str(exc))
    if not isinstance(exc, NameError) or not found:
        return None
    name, code = found.group(1), frame.f_code
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    if not params or name in params:
        return None
    given = ", ".join(params)
    if code.co_name == "<lambda>":
        return (
            f"`{name}` has no value when this lambda runs: the lambda is called with each item as its own "
            f"parameter ({given}), so its body must read {given}, not `{name}` (a variable of the code around it)"
        )
    return (
        f"`{name}` has no value when this line of {code.co_name}() runs: the values this function is "
        f"given are its parameters ({given}); read one of them, or assign `{name}` before this line"
    )


def _dict_unpacked(exc: BaseException, frame: FrameType) -> Optional[str]:
    """`for k, v in d:` over a dict: each item is a key alone, which cannot be unpacked."""
    if not isinstance(exc, TypeError) or "cannot unpack non-iterable" not in str(exc):
        return None
    loop = re.search(r"for\s+(.+?)\s+in\s+([\w.]+)\s*:", _line(frame))
    if not loop or not isinstance(_lookup(loop.group(2), frame), dict):
        return None
    names, where = loop.groups()
    return (
        f"`for {names} in {where}` goes through a dict, and iterating a dict gives its keys only, one "
        f"at a time: use {where}.items() for the (key, value) pairs"
    )


def _mask_misfit(exc: BaseException, frame: FrameType) -> Optional[str]:
    """t[mask] with a mask made for another tensor: name the tensor indexed and those the mask fits."""
    found = re.search(r"shape of the mask \[([\d, ]*)\].*shape of the indexed tensor \[([\d, ]*)\]", str(exc))
    indexed = re.search(r"([\w.]+)\[", _line(frame))
    if not isinstance(exc, IndexError) or not found or not indexed:
        return None
    mask, target = found.groups()
    fits = [
        name
        for name, value in frame.f_locals.items()
        if hasattr(value, "shape") and list(value.shape) == [int(n) for n in mask.split(",") if n.strip()]
    ]
    if not fits:
        return None
    return (
        f"a boolean mask of shape [{mask}] indexes {indexed.group(1)}, of shape [{target}]: the mask does not "
        f"fit that tensor's shape (this is not an index past the end). It has the shape of "
        f"{', '.join(fits)}: index the tensor the mask was made for"
    )


RULES = (_not_in_queue, _name_without_value, _dict_unpacked, _mask_misfit)


def frame_words(exc: BaseException, frame: Optional[FrameType]) -> Optional[str]:
    """The mistake behind `exc`, confirmed by the variables of `frame` (the student's frame that
    raised), or None when no rule confirms one."""
    if frame is None:
        return None
    for rule in RULES:
        try:
            words = rule(exc, frame)
        except Exception:  # a student's object that cannot be read (a property that raises): no clue
            words = None
        if words:
            return words
    return None
