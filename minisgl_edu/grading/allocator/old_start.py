"""Exercise 4, stretch — the rest of a split run whose end entry still gives the old run's start, for
contiguous_probes.split_end_probe.

Where this sits: a page freed just after the rest of a run that allocate() split does not join it.
One cause is the rest's end entry lost (written, then deleted as the old run's end: split_end_probe's
own hint); the one named here is the end entry left as it was ("the end has not moved"), so by_end
still maps the run's end to its OLD start, the first page allocate() just handed out. The probe names
it only when the freed page looks that old start up: on fresh allocators, free() raises KeyError for
exactly the page the split took, for two different runs.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

OLD_START = (
    "when allocate() splits a run, the rest starts count pages later and keeps the old end, so its end entry must "
    "give the rest's new start too (by_end[end] = start + count): left as it was, it still gives the old start, "
    "a page you just handed out, and a page freed just after the rest looks up a run that is gone"
)


def _key_looked_up(cls, freed: list[int], after: int) -> object:
    """On a fresh allocator of 6 pages, all handed out: free(freed), allocate(1) (which must take freed[0]),
    then free([after]). The key of the KeyError that last free raised, or None when it did not raise one
    or a step before it went otherwise."""
    try:
        a = cls(6)
        if sorted(a.allocate(6)) != list(range(6)):
            return None
        a.free(freed)
        if a.allocate(1) != [freed[0]]:
            return None
    except Exception:
        return None
    try:
        a.free([after])
    except KeyError as e:
        return e.args[0] if e.args else None
    except Exception:
        return None
    return None


def old_start_probe(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for a page that did not join the rest of a split run (`seen`: what the case saw), when the
    rest's end entry still gives the old run's start: after the run (0, 3) is split by allocate(1), free([3])
    raises KeyError: 0, and after (1, 3) is split, free([4]) raises KeyError: 1. None otherwise."""
    if _key_looked_up(cls, [0, 1, 2], 3) != 0 or _key_looked_up(cls, [1, 2, 3], 4) != 1:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out: after free([0, 1, 2]), allocate(1) takes page 0 "
        "and leaves the rest (1, 2), and free([3]) then raises KeyError: 0; after free([1, 2, 3]) and allocate(1), "
        "free([4]) raises KeyError: 1. Each time the freed page looked up the old run's start, the page just "
        "handed out: your end index still maps the rest's end to the start the run had before the split",
        OLD_START,
    )
