"""The stretch's contiguous allocator: its reference (best fit over the free runs), and what a wrong
`allocate(n)` shows, in the contract's words:
the message and the hint for the pages it gave instead of the reference's (the order, the run it
took them from, the part of that run, the rule when no single run holds n). Shared by the
hand-written cases (contiguous.py) and the generated scenes' hints (scenes.py).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.shared_list import earlier_pages
from minisgl_edu.kvcache.allocator import OutOfPages


def free_runs(free: set[int]) -> list[tuple[int, int]]:
    """The maximal runs of consecutive ids in `free`, as sorted (start, length) pairs."""
    out: list[tuple[int, int]] = []
    for p in sorted(free):
        if out and out[-1][0] + out[-1][1] == p:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((p, 1))
    return out


RUNS_AS_ENDS = (
    "runs lists (start, length) pairs: the second number of each run is its length, not its end (start + length)"
)


def runs_as_ends(got: object, want: list[tuple[int, int]]) -> Optional[str]:
    """When the student's runs `got` are the reference's runs `want` with every second number its
    start plus its length (one past the run's last page), the message that says so, else None."""
    if not isinstance(got, list) or not got or got == want or len(got) != len(want):
        return None
    if all(tuple(g) == (start, start + length) for g, (start, length) in zip(got, want)):
        return (
            f"your runs are {got}, expected {want}: each of your runs is (start, end), its second number one past "
            "its last page; runs are (start, length) pairs, e.g. pages 3..19 free make the run (3, 17), not (3, 20)"
        )
    return None


EMPTY_RUN = (
    "a run of length 0 left in the free runs: a run that loses all its pages (an exact fit, or a run taken "
    "whole) must be removed, not kept as (start, 0); shrink a run only while pages are left in it"
)
NEGATIVE_RUN = "a run's length is the number of free pages in it: never 0 or less"
OVERLAP = "each free page is in exactly one run: runs never overlap (start + length <= the next run's start)"


def run_shape(got: list[tuple[int, int]]) -> Optional[tuple[str, str]]:
    """(what is wrong, hint) when the student's runs `got` break the contract's shape whatever the
    reference holds: a run of length 0 or less, or two runs, sorted by start, that share pages.
    None when every run is well formed (their order and their merging are checked by the caller)."""
    for start, length in got:
        if length == 0:
            return f"your runs {got} list {(start, length)}, a run of length 0, which holds no page", EMPTY_RUN
        if length < 0:
            return f"your runs {got} list {(start, length)}, a run of negative length", NEGATIVE_RUN
    ordered = sorted(got)
    for (s1, n1), (s2, n2) in zip(ordered, ordered[1:]):
        if s1 + n1 > s2:
            return (
                f"your runs {got} list {(s1, n1)} and {(s2, n2)}, which overlap: page {s2} is in both",
                OVERLAP,
            )
    return None


class ReferenceContiguousAllocator:
    """The stretch's reference: best fit over the free runs, the largest run first when none fits."""

    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self._free = set(range(num_pages))

    @property
    def num_free(self) -> int:
        return len(self._free)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return free_runs(self._free)

    def allocate(self, n: int) -> list[int]:
        if n > len(self._free):
            raise OutOfPages(f"asked for {n} pages, {len(self._free)} free")
        taken: list[int] = []
        while len(taken) < n:
            need = n - len(taken)
            runs = self.runs
            fits = [(length, start) for start, length in runs if length >= need]
            if fits:
                _, start = min(fits)  # the smallest run that holds the rest; ties: the lowest id
                count = need
            else:
                start, count = min(runs, key=lambda r: (-r[1], r[0]))  # the largest; ties: the lowest id
            pages = range(start, start + count)
            self._free.difference_update(pages)
            taken.extend(pages)
        return sorted(taken)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        used = set(range(self.num_pages)) - self._free
        for p in pages:
            if p not in used:
                raise ValueError(f"page {p!r} is not in use (freed twice, or never handed out)")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        self._free.update(pages)


def _run_of(pages: list[int], runs: list[tuple[int, int]]) -> Optional[tuple[int, int]]:
    """The free run that holds all of `pages`, if one does."""
    for start, length in runs:
        if all(start <= p < start + length for p in pages):
            return start, length
    return None


def _pages(n: int) -> str:
    return f"{n} page" if n == 1 else f"{n} pages"


def _wrong_pages(n: int, before: list[tuple[int, int]], got: list[int], want: list[int], why: str) -> tuple[str, str]:
    """Why the student's allocate(n) gave `got` instead of `want`, in the words of the contract, and
    the hint for that mistake."""
    head = f"allocate({n}) with free runs {before} gave {got}, expected {want}"
    if why:
        head += f" ({why})"
    if sorted(got) == want:
        return f"{head}: the right pages, in the wrong order; return them in increasing order", "sort what you return"
    if len(got) != n or len(set(got)) != n:
        whole = _largest_runs_whole(n, before, got)
        if whole:
            return (
                f"{head}: no run holds {_pages(n)}, and you took {whole} whole runs, the largest first, until you had "
                f"{len(got)} pages, more than {n}: after a run taken whole, fewer pages are still needed; work out "
                "what is still needed (n minus the pages taken so far) on every pass, and serve that by best fit",
                "work out the pages still needed on every pass: n minus the pages taken so far",
            )
        return earlier_pages(n, before, got, head) or (f"{head}: {n} distinct pages expected", "")
    fits = [(start, length) for start, length in before if length >= n]
    theirs = _run_of(got, before)
    if fits and theirs is not None:
        best = min(fits, key=lambda r: (r[1], r[0]))
        if theirs == best:
            first = "take the first n pages of the run: the rest stays one run"
            if max(got) == theirs[0] + theirs[1] - 1:
                return f"{head}: you took the end of run {theirs}; take the first {_pages(n)} of the run", first
            return f"{head}: take the first {_pages(n)} of run {theirs}", first
        if theirs[1] == best[1]:
            return (
                f"{head}: you took them from run {theirs}; runs {best} and {theirs} are both the smallest that "
                f"hold {_pages(n)}, and of runs that tie the lowest id wins",
                "of two runs of the same length, the one that starts lower",
            )
        if theirs == fits[0]:
            which = "the first run that holds them (first fit)"
        elif theirs[1] == max(r[1] for r in before):
            which = "the largest run (worst fit)"
        else:
            which = f"run {theirs}"
        exact = best[1] == n  # an exact fit passed over, as by a `length > n` test
        return (
            f"{head}: you took them from {which}; best fit takes the smallest run that holds them, {best}"
            + (f", which holds exactly {_pages(n)}" if exact else ""),
            "the smallest free run that holds n pages"
            + (", a run of exactly n first of all (length >= n, not > n)" if exact else ""),
        )
    tie = None if fits else _largest_tie_to_the_highest(n, before, got)
    if tie:
        return f"{head}: {tie}", LARGEST_TIE
    rest = None if fits else _rest_not_best_fit(n, before, got)
    if rest:
        largest, theirs, best = rest
        if theirs[1] == best[1]:
            return (
                f"{head}: after the largest run {largest} whole, {_pages(n - largest[1])} more from run {best}, "
                f"not {theirs}: of runs that tie the lowest id wins",
                "of two runs of the same length, the one that starts lower",
            )
        return (
            f"{head}: after the largest run {largest} whole, {_pages(n - largest[1])} more from the smallest run "
            f"that holds them, {best}, not {theirs}",
            "after the largest run, the pages still needed come by best fit: the smallest run that holds them",
        )
    if not fits and before:
        smallest = min(before, key=lambda r: (r[1], r[0]))
        largest = min(before, key=lambda r: (-r[1], r[0]))
        smallest_whole, largest_whole = (
            set(range(start, start + length)) <= set(got) for start, length in (smallest, largest)
        )
        if smallest[1] < largest[1] and smallest_whole and not largest_whole:
            return (
                f"{head}: no single run holds {_pages(n)}, and you took the smallest run {smallest} whole instead "
                f"of the largest, {largest}: start with the largest run whole, so the pages come in as few pieces "
                "as can be, then serve the rest by the same rule",
                "no run holds n: the largest run whole first, not the smallest, then the rest by the same rule",
            )
    if not fits:
        return (
            f"{head}: no single run holds {_pages(n)}, so the rule is: take the largest run whole (ties: the "
            "lowest id), then serve the pages still needed by the same rule (best fit if a run holds them, "
            "else the largest run again)",
            "no run holds n: the largest run whole, then the rest by the same rule",
        )
    return head, ""


LARGEST_TIE = "no run holds n: the largest run whole, and of largest runs that tie, the one that starts lowest wins"


def _fallback(n: int, runs: list[tuple[int, int]], ties_high: bool) -> list[int]:
    """The contract's rule on free `runs`, except that when no run holds what is still needed, of the
    largest runs the one with the highest start is taken (if `ties_high`; else the lowest, the contract)."""
    runs, taken = list(runs), []
    while len(taken) < n and runs:
        need = n - len(taken)
        fits = [r for r in runs if r[1] >= need]
        if fits:
            start, _ = min(fits, key=lambda r: (r[1], r[0]))
            count = need
        else:
            start, count = max(runs, key=lambda r: (r[1], r[0] if ties_high else -r[0]))
        i = next(i for i, r in enumerate(runs) if r[0] == start)
        runs[i] = (start + count, runs[i][1] - count)
        runs = [r for r in runs if r[1] > 0]
        taken.extend(range(start, start + count))
    return sorted(taken)


def _largest_tie_to_the_highest(n: int, before: list[tuple[int, int]], got: list[int]) -> Optional[str]:
    """No run holds n, and `got` is what the rule gives when of several largest runs the one that
    starts highest is taken whole: the message that says so, else None."""
    if sorted(got) != _fallback(n, before, ties_high=True) or sorted(got) == _fallback(n, before, ties_high=False):
        return None
    size = max(length for _, length in before)
    tied = [r for r in before if r[1] == size]
    if len(tied) < 2:  # the tie came up later, on a pass for the pages still needed
        return (
            f"no single run holds {_pages(n)}: on a later pass, when no run holds the pages still needed, you "
            "took the largest run that starts highest; of largest runs that tie, the lowest start wins"
        )
    return (
        f"no single run holds {_pages(n)}: runs {tied} tie as the largest, and you took {tied[-1]} whole first; "
        f"of largest runs that tie, the lowest start wins, so {tied[0]} whole first, then the rest by the same rule"
    )


def _largest_runs_whole(n: int, before: list[tuple[int, int]], got: list[int]) -> int:
    """No run holds n, and `got` (more than n pages) is the k largest runs whole (ties: the lowest
    id), as when the pages still needed are worked out once: k, else 0."""
    if len(got) <= n or len(set(got)) != len(got) or any(length >= n for _, length in before):
        return 0
    taken: set[int] = set()
    for k, (start, length) in enumerate(sorted(before, key=lambda r: (-r[1], r[0])), 1):
        taken.update(range(start, start + length))
        if taken == set(got):
            return k if k > 1 else 0
    return 0


def _rest_not_best_fit(
    n: int, before: list[tuple[int, int]], got: list[int]
) -> Optional[tuple[tuple[int, int], tuple[int, int], tuple[int, int]]]:
    """No run holds n, and `got` is the largest run whole plus pages from one other run that holds
    them but is not the smallest that does: (the largest run, their run, the best-fit run)."""
    if not before:
        return None
    largest = min(before, key=lambda r: (-r[1], r[0]))
    rest = [p for p in got if not largest[0] <= p < largest[0] + largest[1]]
    holds = [r for r in before if r != largest and r[1] >= len(rest)]
    if not rest or len(rest) != n - largest[1] or not holds:
        return None
    theirs, best = _run_of(rest, holds), min(holds, key=lambda r: (r[1], r[0]))
    return (largest, theirs, best) if theirs is not None and theirs != best else None


ALLOCATE_ZERO = (
    "allocate(0) asks for no page, so it always fits (0 <= num_free), even on a full pool with no free run at "
    "all: return [] and take nothing; refuse only when n > num_free"
)
FALLBACK = "num_free >= n must succeed even if no run holds n pages"


def refused(n: int, before: list[tuple[int, int]]) -> tuple[str, str]:
    """The message and the hint for an allocate(n) that raised OutOfPages though n <= num_free (free
    runs `before`): the request the contract allows, read from the call: n == 0, a run that holds n, or
    enough pages in several runs."""
    free = sum(length for _, length in before)
    head = f"allocate({n}) with free runs {before} ({free} pages free) raised OutOfPages, though {n} <= num_free"
    if n == 0:
        return (
            f"{head}: asking for no page is always allowed, even with no page free; allocate(0) returns [] and "
            "takes nothing",
            ALLOCATE_ZERO,
        )
    fits = [r for r in before if r[1] >= n]
    if fits:
        best = min(fits, key=lambda r: (r[1], r[0]))
        return (
            f"{head}: run {best} holds {_pages(n)} on its own",
            f"refuse allocate(n) only when n > num_free: here run {best} holds the {_pages(n)}",
        )
    return (
        f"{head}: no single run holds them, but num_free >= n: the engine counts on that allocate succeeding (it "
        "checks num_free only), so take pages from several runs",
        FALLBACK,
    )


def touching(runs: list[tuple[int, int]]) -> Optional[str]:
    """The first two of sorted `runs` that touch (one ends where the next starts), in words; None if none."""
    for (s1, n1), (s2, n2) in zip(runs, runs[1:]):
        if s1 + n1 == s2:
            return f"runs {(s1, n1)} and {(s2, n2)} touch: they are one run, {(s1, n1 + n2)}"
    return None
