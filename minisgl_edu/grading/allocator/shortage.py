"""Exercise 4 — a shortage answered with a value: `allocate(n)` with fewer than n pages free returns
`[]` (or None), "nothing could be given", instead of raising OutOfPages.

Where this sits: the hand cases of the base part (base.py) and of the stretch (contiguous.py) see the
symptom, an allocate that should have been refused and returned. The probe here runs the answer once
more on fresh allocators of 2 pages, to name the mistake only when the answer really does this on every
shortage: allocate(3) on a new one (more than the pool) and allocate(1) once both pages are taken each
return that same empty value and take nothing. A caller that gets [] goes on as if it had its pages: the
cache manager would write a row with no pages, where the contract's exception makes the scheduler wait.
"""

from __future__ import annotations

from typing import Any

from minisgl_edu.grading.core import Mistake

_NOT_GIVEN = object()  # what _short returns when the call raised or took pages: not this mistake


def _short(a, n: int, free: int) -> Any:
    """What allocate(n) on allocator `a` (num_free reads `free`, fewer than n) returns, when it returns
    without raising and num_free still reads `free` afterwards; _NOT_GIVEN otherwise."""
    try:
        got = a.allocate(n)
        return got if a.num_free == free else _NOT_GIVEN
    except Exception:
        return _NOT_GIVEN


def returned_when_short(cls) -> Any:
    """The empty value ([] or None) the answer returns for a shortage, when fresh allocators of 2 pages show
    it on both kinds: allocate(3) on a new one, and allocate(1) after allocate(2) took both pages (which
    must work). _NOT_GIVEN when they do not."""
    try:
        over = _short(cls(2), 3, 2)
        a = cls(2)
        if len(a.allocate(2)) != 2:
            return _NOT_GIVEN
    except Exception:
        return _NOT_GIVEN
    dry = _short(a, 1, 0)
    if over not in ([], None) or dry != over or type(dry) is not type(over):
        return _NOT_GIVEN
    return over


def not_raised(cls, call: str, returned: Any) -> AssertionError:
    """What a case raises when `call` ("allocate(2) with 1 free") returned `returned` where the contract
    asks for OutOfPages: the Mistake that names an empty value given for a shortage, when the answer returns
    that same value on the probes above; else the plain failure."""
    if returned not in ([], None) or returned_when_short(cls) != returned:
        return AssertionError(f"{call} returned {returned!r}; it must raise OutOfPages")
    return Mistake(
        f"{call} returned {returned!r}; it must raise OutOfPages. On a fresh allocator of 2 pages, allocate(3) "
        f"and, once both pages are taken, allocate(1) return {returned!r} too and take nothing: your allocate "
        f"answers a shortage with {returned!r}, and the caller goes on as if it had the pages it asked for",
        f"when fewer than n pages are free, raise OutOfPages (from minisgl_edu.kvcache.allocator); do not return "
        f"{returned!r}: the scheduler catches the exception and waits for pages, but it takes a returned list for "
        "the pages it asked for",
    )
