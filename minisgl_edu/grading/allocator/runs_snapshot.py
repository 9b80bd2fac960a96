"""Exercise 4, stretch — what a KeyError raised by the contiguous allocator's allocate() means, for
contiguous.py's step that calls allocate().

Two slips raise it. The rest of a split run whose end was lost from the books (contiguous_probes.
split_end_probe, asked first), and a snapshot of the free runs kept across allocate's loop:
`runs = dict(self.by_start)` before the loop, every run picked from that copy. When no run holds n
pages the largest is taken whole and leaves the real runs, but not the copy; if it is then the only run
of the copy that holds the pages still needed, it is picked a second time, and deleting it again raises
KeyError (or its pages are handed out twice). A third slip, asked last, is the runs unpacked as
(length, start): a run is then looked up at the page its length names (swapped_run.swapped_run_probe).

`runs_snapshot_probe` confirms the snapshot on two small allocators of its own, 7 pages, all handed out
by allocate(7), then some freed:

* free runs (0, 3), (4, 1), (6, 1): allocate(5) must give [0, 1, 2, 4, 6]. The snapshot takes (0, 3)
  whole, then finds only (0, 3) in its copy that holds 2 more: KeyError 0, or page 0 twice.
* free runs (0, 3), (4, 2): allocate(5) must give [0, 1, 2, 4, 5]. Here the run (4, 2) holds the 2 pages
  still needed and is the smaller fit, so the snapshot answer gets it right: its fallback works, it only
  picks a run it already took when that run is the only fit left.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_probes import split_end_probe
from minisgl_edu.grading.allocator.swapped_run import swapped_run_probe
from minisgl_edu.grading.core import Mistake

RUNS_SNAPSHOT = (
    "pick every run from the free runs as they are now (self.by_start at each step of allocate's loop), never "
    "from a copy made before the loop: a run already taken whole is still in the copy, and is picked again "
    "when it is the only one that holds the pages still needed"
)


def _allocate_five(frees: list[list[int]]) -> object:
    """The step both probes share, as a function of the class: on a fresh allocator of 7 pages, all handed
    out by allocate(7), free each list of `frees`, then allocate(5)."""

    def run(cls) -> object:
        try:
            a = cls(7)
            if sorted(a.allocate(7)) != list(range(7)):
                return None
            for pages in frees:
                a.free(pages)
        except Exception:
            return None  # the set-up went otherwise: nothing to say
        try:
            return sorted(a.allocate(5))
        except KeyError as e:
            return ("key", e.args[0] if e.args else None)
        except Exception as e:
            return f"raised {type(e).__name__}"

    return run


def runs_snapshot_probe(cls, seen: str) -> Optional[Mistake]:
    """When allocate(5) over the free runs (0, 3), (4, 1), (6, 1) picks the run (0, 3) a second time
    (KeyError 0, or page 0 twice), yet gives [0, 1, 2, 4, 5] over (0, 3), (4, 2), the Mistake that says the
    runs were read from a copy made before the loop (`seen`: what the case saw); None otherwise."""
    got = _allocate_five([[0, 1, 2], [4], [6]])(cls)
    twice = got == ("key", 0) or (isinstance(got, list) and got.count(0) > 1)
    if not twice or _allocate_five([[0, 1, 2], [4, 5]])(cls) != [0, 1, 2, 4, 5]:
        return None
    shown = "raised KeyError: 0" if isinstance(got, tuple) else f"gave {got}"
    return Mistake(
        f"{seen}. On a fresh allocator of 7 pages, all handed out by allocate(7), then free([0, 1, 2]), free([4]) "
        f"and free([6]) (free runs (0, 3), (4, 1), (6, 1)): allocate(5) must give [0, 1, 2, 4, 6], but yours "
        f"{shown}: it took the run (0, 3) whole, then picked it again for the 2 pages still needed, as if it "
        "were still free. With free runs (0, 3), (4, 2) it gives [0, 1, 2, 4, 5], right: your allocate() picks "
        "its runs from a snapshot of the free runs made before its loop, which still lists the run it took",
        RUNS_SNAPSHOT,
    )


def allocate_key_error(cls, seen: str, before: list[tuple[int, int]], error: KeyError) -> Optional[Mistake]:
    """The Mistake a KeyError from allocate() shows, confirmed by a probe (`before`: the free runs before the
    call); None when no probe recognises it."""
    return split_end_probe(cls, seen, before, error) or runs_snapshot_probe(cls, seen) or swapped_run_probe(cls, seen)
