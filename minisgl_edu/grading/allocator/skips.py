"""Exercise 4 — a free() that skips the ids it should refuse, for the base part's refusal checks.

frees._must_refuse fails a case when free() accepts an id the contract refuses (a page already
free, the same page twice in one call, one never handed out, -1, num_pages). Many mistakes accept
such an id; one of them tests each id, sees that it is not in use and goes on to the next
(`continue`) as if freeing it were harmless. `skips` shows that on a fresh allocator, with an id of
the same kind as the refused call's, before the hint names it.
"""

from __future__ import annotations

SKIPS_NOT_IN_USE = (
    "an id that is not in use (freed already, listed twice, never handed out, -1, num_pages) must raise "
    "ValueError, not skip it: a free() that skips it and frees the rest hides the caller's bug (a double free), "
    "so raise instead of `continue`"
)


def _kinds(pages: list, num_pages) -> set[str]:
    """The kinds of refused id among the ids the case handed free(): 'repeat' for an id listed twice,
    'negative', 'past the end' (>= num_pages). When there is none of those, 'not in use': the ids are in
    range, and each case that hands free() such ids alone hands it ones that are free (freed already or
    never handed out: the same test refuses both)."""
    kinds = set()
    for p in pages:
        if not isinstance(p, int):
            continue
        if pages.count(p) > 1:
            kinds.add("repeat")
        elif p < 0:
            kinds.add("negative")
        elif isinstance(num_pages, int) and p >= num_pages:
            kinds.add("past the end")
    return kinds or {"not in use"}


def _skips_one(cls, kind: str) -> bool:
    """On a fresh allocator of 4 pages: allocate(2) gives [x, y], free([x]); then free() of an id of
    `kind` followed by y. True when that call is accepted, gives y back (num_free goes up by one, no
    more) and allocate(num_free) then hands out distinct pages, none of them still held: the bad id
    was skipped and the rest of the list freed."""
    try:
        a = cls(4)
        x, y = a.allocate(2)
        a.free([x])
        bad = {"repeat": [y], "negative": [-1], "past the end": [4], "not in use": [x]}[kind]
        before = a.num_free
        a.free(bad + [y])
        after = a.num_free
        if not isinstance(before, int) or after != before + 1:
            return False
        got = a.allocate(after)
    except Exception:
        return False  # refused, or something else went wrong: another check names that
    return isinstance(got, list) and len(set(got)) == len(got) == 4 and set(got) == {0, 1, 2, 3}


def skips(cls, pages: list, num_pages) -> bool:
    """Whether free() skips every kind of refused id that `pages` holds (see _kinds), and a page freed
    already as well: shown on fresh allocators, so the hint says 'skipped' only for an answer that
    behaves that way. The freed page always, because skipping it is the mistake this names; a free()
    that walks set(pages) passes over a repeat alone, and the repeat's own hint names that."""
    kinds = _kinds(pages, num_pages) | {"not in use"}
    return all(_skips_one(cls, k) for k in sorted(kinds))
