"""Exercise 4 stretch — two run indexes that are one dict, for ContiguousPageAllocator's cases (contiguous.py).

Where this sits: `_Pair.same_state` (contiguous.py) sees runs that differ from the reference's. The
probe here looks at a fresh allocator, to name one cause only when it shows: two of its attributes
are the very same dict object (not two equal dicts), as after `self.by_start = self.by_end = {}`.
A chained assignment binds both names to ONE dict, so a run's start entry (start -> length) and its
end entry (end -> start) land in one table, and `runs` lists every end as a run of its own: a fresh
allocator of 6 pages lists (0, 6) and (6, 0).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

ONE_INDEX = (
    "the two run indexes must be two dicts: a chained assignment such as `self.by_start = self.by_end = {}` "
    "binds both names to ONE dict, so each run's end entry (end -> start) sits beside its start entry and is "
    "listed as a run; create each with its own {} (self.by_start = {} and self.by_end = {})"
)


def _shared_dict(cls, num_pages: int) -> Optional[tuple[str, str, dict]]:
    """On a fresh `cls(num_pages)`: two attribute names bound to one and the same dict, and that dict,
    or None when every dict attribute is its own object."""
    try:
        a = cls(num_pages)
        attrs = list(vars(a).items())
    except Exception:
        return None
    for i, (name, value) in enumerate(attrs):
        for other, same in attrs[i + 1 :]:
            if isinstance(value, dict) and same is value:
                return name, other, dict(value)
    return None


def one_index(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for wrong runs (`seen`: what the case saw), when a fresh allocator of 6 pages keeps
    two of its attributes in one dict; None otherwise."""
    found = _shared_dict(cls, 6)
    if found is None:
        return None
    name, other, table = found
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, self.{name} and self.{other} are one and the same dict, "
        f"{table}: what you store in one index is in the other, so every run's end entry is listed as a run too",
        ONE_INDEX,
    )
