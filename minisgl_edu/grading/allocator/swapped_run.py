"""Exercise 4, stretch — a probe for one slip in reading the free runs, used by contiguous.py when
allocate(n) gave other pages than the reference's, and by runs_snapshot.py when it raised KeyError.

* `swapped_run_probe`: the runs are kept start -> length (`by_start`), and an answer that unpacks
  them the other way round (`for length, start in self.by_start.items()`) reads each run's start as
  its length and its length as its start. The fit test then compares the start with n, so a run that
  starts at page 0 never fits, and a run that does "fit" is taken from the page its LENGTH names: a
  page in use, or a start no run has (KeyError). On fresh allocators of 9 pages, all handed out by
  allocate(9), one run is freed, (4, 2) and then (5, 3), and allocate(2) is tried on each: the answer
  starts at page 2, then at page 3 (the lengths), or fails looking those pages up as starts.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

SWAPPED_RUN = (
    "each free run is (start, length), in that order: by_start maps start -> length, so unpack its items as "
    "`for start, length in self.by_start.items()`; read the other way round, a run's start is taken for its "
    "length and its length for the page it starts at"
)

# (the one block of pages freed, its run, the page the swapped reading starts at: the run's length)
_SCENES = (([4, 5], (4, 2), 2), ([5, 6, 7], (5, 3), 3))


def _allocate_2(cls, freed: list[int]):
    """On a fresh allocator of 9 pages, all handed out by allocate(9), the block `freed` given back: the
    pages allocate(2) then takes, or ("KeyError", key) when it raises KeyError; None otherwise."""
    try:
        a = cls(9)
        if sorted(a.allocate(9)) != list(range(9)):
            return None
        a.free(list(freed))
        return sorted(a.allocate(2))
    except KeyError as e:
        return ("KeyError", e.args[0] if e.args else None)
    except Exception:
        return None


def _fresh_allocate_2(cls) -> Optional[list[int]]:
    """allocate(2) on a fresh allocator of 8 pages (one run, (0, 8)), or None when it raised."""
    try:
        return sorted(cls(8).allocate(2))
    except Exception:
        return None


def _said(got) -> str:
    return f"raises KeyError: {got[1]}" if isinstance(got, tuple) else f"gives {got}"


def swapped_run_probe(cls, seen: str) -> Optional[Mistake]:
    """When allocate(2) starts at the run's length on both scenes (it takes the 2 pages from there, or
    raises KeyError looking that page up as a run's start), the Mistake that says the answer unpacks
    each run as (length, start) (`seen`: what the case saw); None otherwise."""
    got = [_allocate_2(cls, freed) for freed, _, _ in _SCENES]
    # the swapped reading starts at the run's length: it takes pages from there, or finds no run there
    if any(g not in ([at, at + 1], ("KeyError", at)) for g, (_, _, at) in zip(got, _SCENES)):
        return None
    (_, first, at_first), (_, second, at_second) = _SCENES
    fresh = _fresh_allocate_2(cls)
    zero = (
        f"; and on a fresh allocator of 8 pages, whose one run (0, 8) then reads as 0 pages long and never fits, "
        f"allocate(2) gives {fresh}, not [0, 1]"
        if fresh is not None and fresh != [0, 1]
        else ""
    )
    return Mistake(
        f"{seen}. On fresh allocators of 9 pages, all handed out by allocate(9), with the one free run {first} "
        f"allocate(2) {_said(got[0])}, and with the one free run {second} it {_said(got[1])}: each time you take "
        f"page {at_first}, then {at_second}, the run's LENGTH, for the page the run starts at, while "
        f"best fit takes [{first[0]}, {first[0] + 1}] and [{second[0]}, {second[0] + 1}]. You read each run as "
        f"(length, start), the other way round{zero}",
        SWAPPED_RUN,
    )
