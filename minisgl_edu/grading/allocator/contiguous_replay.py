"""Exercise 4, stretch — the small allocator the contiguous probes replay their steps on.

A probe names a mistake only when the answer misbehaves on a tiny scene of its own, and several
probes start from the same place: a fresh allocator of 6 pages, all handed out by allocate(6). From
there a set-up (frees and allocates that must go as the contract says, or the probe has nothing to
say) and the one step the probe looks at, whose runs, or exception, are the answer.
"""

from __future__ import annotations

from typing import Any, Callable


def replay(cls, setup: Callable[[Any], bool], step: Callable[[Any], None]) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): `setup` (False when a step went
    otherwise than the contract's), then `step`. The runs after `step`, 'raised <exception name>' when it
    raised, or None when allocate(6) or the set-up went otherwise."""
    try:
        a = cls(6)
        if sorted(a.allocate(6)) != list(range(6)) or not setup(a):
            return None
    except Exception:
        return None
    try:
        step(a)
        return [tuple(r) for r in a.runs]
    except Exception as e:
        return f"raised {type(e).__name__}"
