"""The own-code rule: the graded object must be the student's, not the package's answer.

Where this sits in the course: before any case runs, `run_cases` asks `borrowed()` whether the
student's function or class *is*, subclasses, or refers to the package's own implementation (the
exercise's reference object, its methods, or the module it lives in). If it does, every case fails
with that one message: importing `minisgl_edu.scheduler.abort.abort_request` is not an answer.

"Refers to" is read from the code, without running it: the global names, attribute names,
closure cells and default values of every function the student wrote, followed recursively into
their own helper functions, nested functions and class methods. An import done at run time by a
string (importlib) is not seen; the rule is meant to catch the honest shortcut, not an attacker.

The API (one home for the rule; graders do not write their own):

* a grader module declares what counts as the package's answer: `SOLUTION` (the object the
  shape of the student's answer is checked against, and what `allow_reference=True` lets through)
  and, optional, `REFERENCES = [...]`: further package objects that are the answer too. A stretch
  grader whose `SOLUTION` is a reference written in the grader (min_tokens, to_cache, lpm, ...)
  lists the base part's package answer there, e.g. `REFERENCES = [package_check_finish]`;
* `references(mod)` -> `[mod.SOLUTION, *mod.REFERENCES]`, what `grade()` hands to `run_cases`;
* `run_cases(..., reference=<one object or a list>)` (core.py) fails every case with one message
  when the student's answer uses any of them, before any case runs: no case calls a check itself;
* `not_own_code(impl, refs)` -> that message or None; `borrowed(impl, *refs)` -> what was used
  (a description) or None, for tests and for a grader that must look at an object it built.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any, Optional, Sequence

from minisgl_edu.grading.feedback import is_student_file


def _forbidden(reference: Any) -> dict[int, str]:
    """id -> description of every object that counts as the package's answer."""
    module = sys.modules.get(getattr(reference, "__module__", ""), None)
    name = f"{reference.__module__}.{reference.__qualname__}"
    out = {id(reference): f"the package's own {name}"}
    if module is not None:
        out[id(module)] = f"the package's module {module.__name__}, where its own answer lives"
    if isinstance(reference, type):
        for attr, value in vars(reference).items():
            for fn in _unwrap(value):
                if callable(fn):
                    out.setdefault(id(fn), f"the package's own {name}.{attr}")
    return out


def _unwrap(value: Any) -> list[Any]:
    """The functions inside a class attribute (a method, property, staticmethod, partial, ...)."""
    if isinstance(value, (staticmethod, classmethod)):
        return [value.__func__]
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    if isinstance(value, functools.partial):
        return [value.func, *value.args, *value.keywords.values()]
    if isinstance(value, types.MethodType):
        return [value.__func__, value.__self__]
    return [value]


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # nested functions, lambdas, comprehensions, class bodies
            names |= _code_names(const)
    return names


def _through_modules(
    module: types.ModuleType, names: list[str], forbidden: dict[int, str], depth: int = 4
) -> Optional[str]:
    """`import minisgl_edu` then `minisgl_edu.scheduler.abort.abort_request(...)`: follow the
    attribute names the code uses from a module, as far as they lead to modules or forbidden objects."""
    frontier = [module]
    for _ in range(depth):
        nxt = []
        for mod in frontier:
            for n in names:
                value = getattr(mod, n, None)
                if value is None:
                    continue
                if id(value) in forbidden:
                    return forbidden[id(value)]
                if isinstance(value, types.ModuleType) and value is not mod and _in_package(value):
                    nxt.append(value)
        frontier = nxt
    return None


def _in_package(module: types.ModuleType) -> bool:
    return module.__name__.split(".")[0] == "minisgl_edu"


def _walk(obj: Any, forbidden: dict[int, str], seen: set[int]) -> Optional[str]:
    if id(obj) in forbidden:
        return forbidden[id(obj)]
    if id(obj) in seen:
        return None
    seen.add(id(obj))
    if isinstance(obj, type):
        for base in obj.__mro__[1:]:
            if id(base) in forbidden:
                return f"a subclass of {forbidden[id(base)]}"
        for value in vars(obj).values():
            for inner in _unwrap(value):
                found = _walk(inner, forbidden, seen)
                if found:
                    return found
        return None
    if isinstance(obj, (staticmethod, classmethod, property, functools.partial, types.MethodType)):
        for inner in _unwrap(obj):
            found = _walk(inner, forbidden, seen)
            if found:
                return found
        return None
    if not isinstance(obj, types.FunctionType):
        return None
    code = obj.__code__
    if not is_student_file(code.co_filename):
        return None  # a library or package function the student calls: fine unless forbidden (above)
    # Sorted: a set's order changes from run to run (string hashing), and the message names the
    # first forbidden object found.
    names = sorted(_code_names(code))
    values = [obj.__globals__[n] for n in names if n in obj.__globals__]
    values += [c.cell_contents for c in (obj.__closure__ or ()) if _has_contents(c)]
    values += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
    for value in values:
        found = _walk(value, forbidden, seen)
        if found:
            return found
        if isinstance(value, types.ModuleType) and _in_package(value):
            found = _through_modules(value, names, forbidden)
            if found:
                return found
    return None


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell (a name assigned later)
        return False
    return True


def borrowed(impl: Any, *references: Any) -> Optional[str]:
    """None if `impl` is the student's own; otherwise what of the package's answer it uses
    (any of `references`)."""
    forbidden: dict[int, str] = {}
    for reference in references:
        for key, what in _forbidden(reference).items():
            forbidden.setdefault(key, what)
    found = _walk(impl, forbidden, set())
    if found:
        return found
    module = getattr(impl, "__module__", None) or ""
    if isinstance(impl, (type, types.FunctionType)) and module.split(".")[0] == "minisgl_edu":
        return f"the package's own {module}.{getattr(impl, '__qualname__', impl)}"
    return None


def not_own_code(impl: Any, references: Sequence[Any]) -> Optional[str]:
    """The message every case gets when `impl` uses one of `references`; None when it is its own."""
    used = borrowed(impl, *references)
    return f"this is not your own code: it uses {used}. Write the answer yourself" if used else None


def references(mod: types.ModuleType) -> list[Any]:
    """What counts as the package's answer for a grader module: its SOLUTION, then its REFERENCES."""
    return [mod.SOLUTION, *getattr(mod, "REFERENCES", ())]
