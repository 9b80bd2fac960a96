"""Exercise 4, stretch — an allocate() whose result holds pages of earlier calls (runs.py asks it).

Where this sits: a fallback written recursively often passes the pages taken so far down as an
accumulator with a default, `def allocate(self, n, taken=[])`. That default list is built once, when
the def runs, and shared by every call (and every allocator) that passes none: each allocate(n)
returns the pages of all the calls before it too. `_wrong_pages` (runs.py) asks `earlier_pages`
when a result is not n distinct pages, and names this when it is more than n pages and some of them
were not free before the call, or come more than once: pages handed out already, by an earlier call.
The message names the fix too: the generated phase (scenes.py) shows the message as its hint.
"""

from __future__ import annotations

from typing import Optional

SHARED_LIST = (
    "allocate(n) returned more than n pages, including pages handed out by earlier calls: build the list you "
    "return fresh on every call. A default argument such as taken=[] is made once, when the def runs, and shared "
    "by every call, so use taken=None and then taken = [] inside"
)


def earlier_pages(n: int, before: list[tuple[int, int]], got: list[int], head: str) -> Optional[tuple[str, str]]:
    """(message, hint) when `got` holds more than n pages and some of them were not in the free runs
    `before` or are listed more than once (pages an earlier call returned), else None."""
    if len(got) <= n:
        return None
    free = {p for start, length in before for p in range(start, start + length)}
    held = sorted({p for p in got if p not in free})
    twice = sorted({p for p in got if got.count(p) > 1})
    if not held and not twice:
        return None
    which = f"{held[:8]} were not free before the call" if held else f"{twice[:8]} come more than once"
    return (
        f"{head}: {len(got)} pages for allocate({n}), and {which}: the result holds pages that earlier calls "
        "handed out, as if the list you return were kept from one call to the next (a default argument such as "
        "taken=[] is made once and shared by every call: build the list fresh on every call)",
        SHARED_LIST,
    )
