"""Exercise 3: every object keeps its own state. The detokenizer worker builds one object per
request and several stream at once, so two objects that share a token list decode each other's tokens.

`check_objects_apart` builds two objects side by side; the first streams 'alpha beta', then the
second ' gamma'. When the second shows the first one's words, they share state. Two ways to get
there, told apart by the objects themselves:

* state kept on the class (`ids = []` in the class body, appended to through self.ids);
* a mutable default argument kept as state (`def __init__(self, tokenizer, stop=(), prefix_ids=[])`
  and `self.ids = prefix_ids`): the default is built once, when the def line runs, so every object
  built without that argument holds the same list. It shows as an attribute that is one and the same
  object in both, and is the default value of a parameter of an __init__ of the class; an object
  built with its own list for that parameter does not hold it (the confirmation).
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.harness import tokenizer

SHARED_STATE = (
    "keep all state on self, set in __init__: state kept on the class (e.g. `ids = []` in the class body) is "
    "shared by every object, and the grader, like the worker, builds a new one for every stream"
)
MUTABLE_DEFAULT = (
    "a mutable default argument kept as state (`def __init__(..., {param}={empty})` and `self.{attr} = "
    "{param}`) is built once, when the def line runs, and shared by every object built without that argument: "
    "default to None and build a new one in __init__, or keep a copy ({kind}({param}))"
)
_MUTABLE = (list, dict, set, bytearray)


def _defaults(cls) -> list[tuple[str, Any]]:
    """(parameter, default value) of every __init__ the class and its bases define."""
    out = []
    for klass in getattr(cls, "__mro__", ()):
        init = vars(klass).get("__init__")
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        out += [(p.name, p.default) for p in params if p.default is not inspect.Parameter.empty]
    return out


def _shared_default(cls, first, second) -> Optional[tuple[str, str, Any]]:
    """(attribute, parameter, value) where both objects hold the same mutable object, which is the
    default of a parameter of the class's __init__, and an object given its own value for that
    parameter does not hold it; None if there is none."""
    try:
        mine, theirs = vars(first), vars(second)
    except TypeError:
        return None
    for attr, value in mine.items():
        if not isinstance(value, _MUTABLE) or theirs.get(attr) is not value:
            continue
        for param, default in _defaults(cls):
            if default is not value:
                continue
            try:
                own = cls(tokenizer(), [], **{param: type(value)()})
            except Exception:
                continue
            if getattr(own, attr, None) is not value:
                return attr, param, value
    return None


def check_objects_apart(cls) -> None:
    """Raise a Mistake when a second object, built beside a first that streamed 'alpha beta', shows
    the first one's words: a mutable default argument kept as state when the objects show one,
    else state shared through the class."""
    tok = tokenizer()
    try:
        first, second = cls(tok, []), cls(tok, [])
        for t in tok.encode("alpha beta"):
            first.add(t)
        first.finish()
        shown = "".join([second.add(t) for t in tok.encode(" gamma")] + [second.finish()])
    except Exception:
        return  # (the case's own failure says what is wrong)
    if "alpha" not in shown and "beta" not in shown:
        return
    shown = shown if len(shown) <= 60 else "..." + shown[-60:]
    said = (
        f"a second object, built beside a first one that was given the tokens of 'alpha beta', showed {shown!r} "
        "for the tokens of ' gamma'"
    )
    found = _shared_default(cls, first, second)
    if found:
        attr, param, value = found
        kind, empty = type(value).__name__, repr(type(value)())
        raise Mistake(
            f"{said}: the two objects' `{attr}` is one and the same {kind}, the default value of __init__'s "
            f"parameter `{param}` ({param}={empty}). A default is built once, when the def line runs, so every "
            f"object built without that argument keeps the same {kind} (an object given its own, {param}={empty}, "
            "does not), and each stream shows the text of the ones before it",
            MUTABLE_DEFAULT.format(param=param, empty=empty, attr=attr, kind=kind),
        )
    raise Mistake(
        f"{said}: the objects share their state (state kept on the class, e.g. `ids = []` in the class body, is "
        "shared by every object), so each stream shows the text of the ones before it",
        SHARED_STATE,
    )
