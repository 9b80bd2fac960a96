"""Python's and torch's own words for a crash, turned into the mistake they point at.

Where this sits in the course: a case stopped by an exception in the student's code gets a hint that
starts with `feedback.crash_cause()`. That function names the crashes the exercises meet most (an
empty max(), a missing key, ...); this table covers the rest that a student's answer raises when
it calls a Python or torch function the wrong way: str.index() for an absent text, torch.log() of
a float, a float tensor used as an index, two tensors of different shapes added. Each rule reads
the exception's message, which already says which call and which types, and says in the course's
words what the code did and what to do instead. A message no rule knows gets None, and the caller
falls back to quoting the line and Python's message.

One check reads more than the message: an AttributeError on an instance of the student's subclass
(`missing_base_init`) is tried on a fresh instance of the base class, to name an __init__ that never
called super().__init__(...).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Rule:
    kind: type  # the exception's class (or a base of it)
    words: str  # a regular expression searched for in str(exc); its groups fill `says`
    says: Callable[..., str]  # the mistake, from the groups


RULES: list[Rule] = [
    Rule(
        ValueError,
        r"substring not found",
        lambda: (
            "str.index() raises ValueError when the text is not there; str.find() returns -1 instead "
            "(test for -1 before using it as a position)"
        ),
    ),
    Rule(
        ValueError,
        r"not in (list|deque)$",
        lambda kind: (
            f"{kind}.index() and {kind}.remove() raise ValueError for an item the {kind} does not hold: test "
            f"`x in the_{kind}` first, or find out why the item is not there (removed already? never added?)"
        ),
    ),
    Rule(
        ValueError,
        r"(not enough|too many) values to unpack",
        lambda few: (
            f"{few} values to unpack: the names on the left do not match what the right side holds "
            "(check what the call returns: one value, a pair, a list)"
        ),
    ),
    Rule(
        TypeError,
        r"cannot unpack non-iterable (\w+) object",
        lambda what: (
            f"a single {what} where your code unpacks several values (a, b = x, or for a, b in ...): "
            "check what each item of the loop, or the call, really is"
        ),
    ),
    Rule(
        TypeError,
        r"must be Tensor, not (\w+)",
        lambda got: (
            f"a torch function was given a Python {got} where it takes a tensor: use the math "
            "module for a plain number, or make the number a tensor first"
        ),
    ),
    Rule(
        TypeError,
        r"'(\w+)' object is not callable",
        lambda what: (
            f"a {what} is called like a function: an attribute or property is read without (), "
            "or a name that held a function now holds a value"
        ),
    ),
    Rule(
        TypeError,
        r"takes \d+ positional arguments? but \d+ (?:were|was) given|missing \d+ required positional argument",
        lambda: (
            "the call's arguments do not match the function's parameters: check the signature the "
            "contract gives (a method's first parameter is self)"
        ),
    ),
    Rule(
        TypeError,
        r"unhashable type: '(\w+)'",
        lambda what: (
            f"a {what} cannot be a dict key or a set item: use a tuple (tuple(ids)) or a number "
            "(.item() of a one-element tensor)"
        ),
    ),
    Rule(
        TypeError,
        r"'(\w+)' object cannot be interpreted as an integer",
        lambda what: f"a {what} where Python needs an int (range(), a repeat count, a slice): use int() or //",
    ),
    Rule(
        TypeError,
        r"slice indices must be integers or None",
        lambda: (
            "a slice bound that is not an int, most often a float from true division: '/' always gives a float "
            "(8 / 4 is 2.0, even when it divides evenly); count whole pages or positions with // (or round up "
            "with -(-a // b))"
        ),
    ),
    Rule(
        TypeError,
        r"(list|tuple) indices must be integers or slices, not (\w+)",
        lambda seq, what: (
            f"a {seq} indexed with a {what}: a {seq} takes ints (.item() for a one-element tensor, int() for a float)"
        ),
    ),
    Rule(
        TypeError,
        r"'(\w+)' object is not subscriptable",
        lambda what: f"a {what} indexed with [ ]: the value here is not the list, dict or tensor your code expects",
    ),
    Rule(
        TypeError,
        r"unsupported operand type\(s\) for (\S+): '(\w+)' and '(\w+)'",
        lambda op, a, b: (
            f"{op} between a {a} and a {b}: one side is not the kind of value your code "
            "expects (a None returned by a call, a list where a number should be)"
        ),
    ),
    Rule(
        TypeError,
        r"'(\S+)' not supported between instances of '(\w+)' and '(\w+)'",
        lambda op, a, b: (
            f"{op} between a {a} and a {b}: values of these kinds have no order (sorting pairs "
            "whose second items are objects? sort with key=)"
        ),
    ),
    Rule(
        IndexError,
        r"tensors used as indices must be long, int, byte or bool",
        lambda: (
            "a tensor used as an index must hold integers or booleans: .long() for positions, .bool() "
            "for a mask (a float tensor cannot index)"
        ),
    ),
    Rule(
        IndexError,
        r"shape of the mask \[([\d, ]*)\] at index (\d+) does not match the shape of the indexed tensor \[([\d, ]*)\]",
        lambda mask, dim, target: (
            f"a boolean mask of shape [{mask}] used on a tensor of shape [{target}] (they differ on dimension "
            f"{dim}): a mask must have the shape of the tensor it indexes; index the one it was made for"
        ),
    ),
    Rule(
        IndexError,
        r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)",
        lambda i, dim, size: (
            f"index {i} on dimension {dim} of a tensor of size {size}: this case reaches a "
            "position past that tensor's end"
        ),
    ),
    Rule(
        RuntimeError,
        r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension (\d+)",
        lambda a, b, dim: (
            f"two tensors of different shapes combined: sizes {a} and {b} on dimension {dim} "
            "(one row against the whole batch, or a vector that needs [:, None] to broadcast)"
        ),
    ),
    Rule(
        RuntimeError,
        r"Boolean value of Tensor with more than one value is ambiguous",
        lambda: (
            "a tensor of several numbers used as a truth value (if t:, and, or, not): say which you "
            "mean, t.any() or t.all(), or test one element"
        ),
    ),
    Rule(
        RuntimeError,
        r"result type (\w+) can't be cast to the desired output type (\w+)",
        lambda got, want: (
            f"an in-place operation would write {got} numbers into a {want} tensor: compute "
            "into a new tensor, or convert the other operand first"
        ),
    ),
    Rule(
        NotImplementedError,
        r'"(\w+?)(?:_cpu|_cuda)?" not implemented for \'(\w+)\'',
        lambda op, dtype: (
            f"torch's {op}() has no kernel for {dtype} numbers"
            + (
                ": torch.tensor() of an empty list makes a float tensor (of a list of ints, a long one), so give "
                "it dtype=torch.long, or handle the empty case (no tokens yet) first"
                if dtype == "Float"
                else ": convert the tensor to a dtype it takes first"
            )
        ),
    ),
    Rule(
        RecursionError,
        r"",
        lambda: "a function calls itself without end: the recursion never reaches the case that stops it",
    ),
    Rule(
        StopIteration,
        r"",
        lambda: "next() found nothing left to give: pass a default, next(it, None), for the empty case",
    ),
]


def missing_base_init(exc: BaseException) -> Optional[str]:
    """An AttributeError for an attribute the base class's __init__ sets, on an instance of a subclass
    with an __init__ of its own: that __init__ never called super().__init__(...). Confirmed on a fresh
    instance of the base class, built from the instance's own attributes of the same names as its
    __init__'s parameters (page_size=...): it has the attribute the student's instance lacks."""
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    if not isinstance(exc, AttributeError) or obj is None or not name or "__init__" not in type(obj).__dict__:
        return None
    for base in type(obj).__mro__[1:-1]:  # the classes it inherits from, object left out
        if "__init__" not in base.__dict__:
            continue
        try:
            params = list(inspect.signature(base.__init__).parameters.values())[1:]  # self left out
            given = {p.name: getattr(obj, p.name) for p in params if hasattr(obj, p.name)}
            confirmed = hasattr(base(**given), name) and not hasattr(obj, name)
        except Exception:  # a parameter the instance holds no value for: no claim
            return None
        if confirmed:
            return (
                f"your {type(obj).__name__} has no {name}: {base.__name__}.__init__ sets it, and your own "
                f"__init__ replaces that one without calling it. Call super().__init__(...) first in your "
                f"__init__, then set what is new"
            )
        return None
    return None


def python_words(exc: BaseException) -> Optional[str]:
    """The mistake behind `exc` in the course's words, or None when no rule knows its message."""
    said = missing_base_init(exc)
    if said:
        return said
    text = str(exc)
    for rule in RULES:
        if isinstance(exc, rule.kind):
            found = re.search(rule.words, text)
            if found:
                return rule.says(*found.groups())
    return None
