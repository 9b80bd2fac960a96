"""Exercise 4, stretch — probes that name a mistake of the contiguous allocator from what its books
show, used by the cases of contiguous.py when the runs or num_free differ from the reference's.

* `fallback_not_counted`: after an allocate(n) that no single run could hold, num_free is too high by
  exactly the pages of the runs taken whole: those pages were handed out but never counted in use.
  `fallback_probe` shows the same on a fresh allocator of 5 pages, for the engine case, where the
  mistake surfaces as the answer's own free() refusing those pages.
* `left_merge`: on fresh allocators of 4 pages, each page handed out by allocate(1), a freed page
  does not join the free run that ends just before it, though it joins the one that starts just
  after it; when it instead joins a run that ends one page earlier (across a page in use), the
  left neighbour is looked up one page off; when only a run that starts at page 0 is never joined,
  its start 0 was read as "no run" (`left_at_zero`).
* `unmerged_probe`: on a fresh allocator of 7 pages, pages 1, 2 and 3 freed by three calls are listed as
  the run (1, 3), but allocate(3), which only that run holds, does not take it: the pieces are merged
  only when `runs` is listed (or not in what allocate chooses from), not at free() time.
* `good_free_failed`: the probes tried, in order, when a free() of pages in use raised KeyError or
  left other runs (the exact fit's end entry is probed in contiguous_exact_fit.py, the left run looked
  up under the freed page in left_pop.py, page 0's left neighbour read at index -1 in left_wrap.py, the
  run after a page that lies after every free run read past the end of the list in right_end.py).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_exact_fit import exact_fit_end_probe
from minisgl_edu.grading.allocator.contiguous_replay import replay
from minisgl_edu.grading.allocator.left_pop import left_pop_probe
from minisgl_edu.grading.allocator.left_wrap import left_wrap_probe
from minisgl_edu.grading.allocator.old_start import old_start_probe
from minisgl_edu.grading.allocator.right_end import right_end_probe
from minisgl_edu.grading.allocator.run_end import run_end_probe
from minisgl_edu.grading.core import Mistake


def whole_run_pages(n: int, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs the contract takes whole for allocate(n) on free `runs` because no run holds the pages
    still needed (the largest, ties: the lowest start, again and again); [] when a run holds n."""
    runs, taken, whole = list(runs), 0, []
    while taken < n and runs:
        need = n - taken
        fits = [r for r in runs if r[1] >= need]
        if fits:
            start, _ = min(fits, key=lambda r: (r[1], r[0]))
            count = need
        else:
            start, count = min(runs, key=lambda r: (-r[1], r[0]))
            whole.append((start, count))
        i = next(i for i, r in enumerate(runs) if r[0] == start)
        runs[i] = (start + count, runs[i][1] - count)
        runs = [r for r in runs if r[1] > 0]
        taken += count
    return whole


FALLBACK_COUNTED = (
    "the pages of a run taken whole, when no run holds n, are handed out too: mark them in use (count them "
    "out of num_free) as on the best-fit path"
)


def fallback_not_counted(n: int, before: list[tuple[int, int]], got: list[int], extra: int) -> Optional[Mistake]:
    """allocate(n) gave the right pages and runs, but num_free is `extra` too high: when that is the number
    of pages taken in runs taken whole, the Mistake that says they were never counted in use."""
    whole = whole_run_pages(n, before)
    if extra <= 0 or extra != sum(length for _, length in whole):
        return None
    names = ", ".join(str(r) for r in whole)
    return Mistake(
        f"allocate({n}) with free runs {before} gave {got}, the right pages, but num_free is {extra} too high: "
        f"exactly the {extra} page(s) of {'run' if len(whole) == 1 else 'runs'} {names}, taken whole because no "
        f"run held {n}. Those pages are handed out, yet your allocator does not count them in use, so it would "
        "refuse their free() and promise pages it does not have",
        FALLBACK_COUNTED,
    )


def runs_after(cls, frees: list[list[int]], takes: tuple[int, ...] = (1, 1, 1, 1)) -> Optional[list[tuple[int, int]]]:
    """On a fresh allocator of sum(takes) pages, all handed out in order by one allocate(k) for each
    k of `takes` (by default allocate(1) four times: pages 0, 1, 2, 3), the runs after each free of
    `frees`; None if the allocates handed out other pages or anything raised."""
    try:
        a = cls(sum(takes))
        starts = [sum(takes[:i]) for i in range(len(takes))]
        if [sorted(a.allocate(k)) for k in takes] != [list(range(s, s + k)) for s, k in zip(starts, takes)]:
            return None
        for pages in frees:
            a.free(pages)
        return [tuple(r) for r in a.runs]
    except Exception:
        return None


LEFT_ONE_OFF = (
    "a freed page p joins the free run that ends just before it, the run whose last page is p - 1 (start + "
    "length == p): look it up under the key you stored runs by, not one page off"
)
LEFT_MISSED = "a freed page joins the free run that ends just before it"
LEFT_AT_ZERO = (
    "a freed page joins the free run that ends just before it, also when that run starts at page 0: yours "
    "never joins a run at page 0 (a start of 0 is falsy: test `p in by_end`, not `if by_end.get(p):`)"
)


def left_at_zero(cls, seen: str) -> Optional[Mistake]:
    """When a freed page joins the run (1, 1) before it but never the run (0, 1) before it, though page 0
    freed next to page 1 joins that one, the Mistake that says a left run starting at page 0 is missed:
    its start 0 was read as "no run" (a truthiness test of the stored start)."""
    at_one = runs_after(cls, [[1], [2]])
    at_zero = runs_after(cls, [[0], [1]])
    if at_one != [(1, 2)] or runs_after(cls, [[1], [0]]) != [(0, 2)] or at_zero in (None, [(0, 2)]):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, each page handed out by allocate(1): free([1]) then free([2]) "
        f"gives [(1, 2)] and free([1]) then free([0]) gives [(0, 2)], but free([0]) then free([1]) gives "
        f"{at_zero}: page 1 does not join the run (0, 1) that ends just before it, only because it starts at 0",
        LEFT_AT_ZERO,
    )


def left_merge(cls, seen: str, touching: bool) -> Optional[Mistake]:
    """When fresh allocators show that a freed page joins the run after it but not the run that ends just
    before it, the Mistake that says so (`seen`: what the case saw); a run that ends one page earlier
    joined across a page in use names the lookup one page off. With `touching` (the case's own message
    already says runs were not merged), only the one-page-off lookup is named."""
    if runs_after(cls, [[2], [1]]) != [(1, 2)]:
        return None  # the run after is not joined either: another mistake
    if (zero := left_at_zero(cls, seen)) is not None:
        return zero
    left = runs_after(cls, [[1], [2]])
    if left is None or left == [(1, 2)]:
        return None
    across = runs_after(cls, [[0], [2]])
    probe = (
        f"{seen}. On a fresh allocator of 4 pages, each page handed out by allocate(1): free([2]) then free([1]) "
        f"gives runs [(1, 2)], but free([1]) then free([2]) gives {left}: page 2 does not join the run (1, 1) "
        "that ends just before it"
    )
    if across is not None and any(start <= 1 < start + length for start, length in across):
        return Mistake(
            f"{probe}; and free([0]) then free([2]), page 1 still in use, gives {across}: page 2 joined the run "
            "(0, 1), which ends one page earlier, across page 1. The left neighbour is looked up one page off",
            LEFT_ONE_OFF,
        )
    return None if touching else Mistake(probe, LEFT_MISSED)


def fallback_probe(cls, seen: str) -> Optional[Mistake]:
    """On a fresh allocator of 5 pages with free runs (0, 2) and (3, 2), allocate(3) takes the run (0, 2)
    whole and one page of (3, 2): when it gives [0, 1, 3] but num_free then reads 3, not 1, the Mistake
    that says the pages of the run taken whole were never counted in use (`seen`: what the case saw)."""
    try:
        a = cls(5)
        blocks = [a.allocate(2), a.allocate(1), a.allocate(2)]
        a.free(blocks[0])
        a.free(blocks[2])
        got = a.allocate(3)
        left = a.num_free
    except Exception:
        return None
    if got != [0, 1, 3] or left != 3:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 5 pages with free runs (0, 2) and (3, 2), allocate(3) gave [0, 1, 3], "
        "the right pages, but num_free then reads 3, not 1: the 2 pages of run (0, 2), taken whole because no "
        "run held 3, are handed out, yet your allocator does not count them in use, so their free() is refused",
        FALLBACK_COUNTED,
    )


def refusal_probe(cls, seen: str) -> Optional[Mistake]:
    """The probes for a free() of pages in use that the answer's own check refused with ValueError (`seen`:
    what the case saw), where the case knows neither the call's free runs nor its pages (the engine case):
    the pages of a run taken whole never counted in use, or the page just after a free run read as free."""
    return fallback_probe(cls, seen) or run_end_probe(cls, seen)


UNMERGED = (
    "merge at free() time, in the runs allocate chooses from: pages freed by separate calls next to each other "
    "are one run for allocate too, not only when runs is listed"
)


def _three_frees(cls, list_runs: bool) -> Optional[tuple[Optional[list], object]]:
    """On a fresh allocator of 7 pages: allocate(5) (pages 0-4), then free([1]), free([2]), free([3]),
    so the free runs are (1, 3), made by three frees, and (5, 2), never handed out; then allocate(3),
    which only (1, 3) holds. Returns (the runs read just before it when `list_runs`, else None; what
    allocate(3) gave, or 'raised <exception>'), or None when the steps before it went otherwise."""
    try:
        a = cls(7)
        if sorted(a.allocate(5)) != [0, 1, 2, 3, 4]:
            return None
        for p in (1, 2, 3):
            a.free([p])
        runs = [tuple(r) for r in a.runs] if list_runs else None
        try:
            got = a.allocate(3)
        except Exception as e:
            got = f"raised {type(e).__name__}"
        return runs, got
    except Exception:
        return None


def unmerged_probe(cls, seen: str) -> Optional[Mistake]:
    """When a run made by freeing pages one call at a time is listed in `runs` as one run, but allocate
    does not take it as one (it falls back to pieces, or picks another run), the Mistake that says free
    runs are not merged at free() time (`seen`: what the case saw); None when allocate sees the run."""
    listed, unlisted = _three_frees(cls, True), _three_frees(cls, False)
    if listed is None or unlisted is None or listed[0] != [(1, 3), (5, 2)]:
        return None  # the runs themselves are wrong: the case's own checks name that
    ok = [sorted(r[1]) == [1, 2, 3] if isinstance(r[1], list) else False for r in (listed, unlisted)]
    if all(ok):
        return None
    probe = (
        f"{seen}. On a fresh allocator of 7 pages: allocate(5) -> [0, 1, 2, 3, 4], then free([1]), free([2]), "
        "free([3]): the free runs are (1, 3) and (5, 2), and only (1, 3) holds 3 pages, so allocate(3) must give "
        "[1, 2, 3]"
    )
    if ok[0]:
        return Mistake(
            f"{probe}. It does when runs is read first, but without that it gave {unlisted[1]}: your free runs "
            "are merged only when runs is listed, and allocate picks among the unmerged pieces",
            UNMERGED,
        )
    return Mistake(
        f"{probe}. Your runs lists [(1, 3), (5, 2)], yet allocate(3) gave {listed[1]}: allocate still sees pages "
        "1, 2 and 3 as separate runs, one per free(); merging them only when runs is listed is too late",
        UNMERGED,
    )


ONE_CALL_ONE_RUN = (
    "the pages of one free() call need not be next to each other: add each page (or each run of adjacent "
    "pages) on its own"
)


def _pages_of(runs: list[tuple[int, int]]) -> set[int]:
    return {p for start, length in runs for p in range(start, start + length)}


def one_run_probe(
    cls, pages: list[int], before: list[tuple[int, int]], got: list[tuple[int, int]]
) -> Optional[Mistake]:
    """free(pages) of pages that are not next to each other left the answer's runs `got` (the free runs
    were `before`): when the pages it added are one block of adjacent ids other than the call's, and on a
    fresh allocator of 8 pages free([1]) then free([5]) give [(1, 1), (5, 1)] while free([1, 5]) gives one
    run, the Mistake that says free() treats the pages of one call as one run (a start and a length)."""
    if not pages or sorted(pages) == list(range(min(pages), min(pages) + len(pages))):
        return None  # one block of adjacent pages: treating it as one run is right
    was, now = _pages_of(before), _pages_of(got)
    added = sorted(now - was)
    if not was <= now or not added or set(added) == set(pages) or added != list(range(added[0], added[-1] + 1)):
        return None
    apart, together = runs_after(cls, [[1], [5]], takes=(8,)), runs_after(cls, [[1, 5]], takes=(8,))
    if apart != [(1, 1), (5, 1)] or together is None or len(together) != 1:
        return None
    return Mistake(
        f"free({pages}) gave back pages that are not next to each other, but your runs after it are {got}: "
        f"the pages added to the free ones are {added}, one block. On a fresh allocator of 8 pages, all handed out "
        f"by allocate(8), free([1]) then free([5]) gives runs [(1, 1), (5, 1)], but free([1, 5]) gives {together}: "
        "your free() treats the pages of one call as one run",
        ONE_CALL_ONE_RUN,
    )


def free_difference(pages: list[int], want: list[tuple[int, int]], got: list[tuple[int, int]]) -> str:
    """The hint for free(pages) whose runs `got` differ from `want`: which pages it lists as free that
    are in use, which free pages it leaves out, or, with the same pages free, that they are grouped
    into other runs."""
    extra, missing = sorted(_pages_of(got) - _pages_of(want)), sorted(_pages_of(want) - _pages_of(got))
    said = [f"lists {extra} as free, which are in use" if extra else "", f"leaves out {missing}" if missing else ""]
    if extra or missing:
        return (
            f"after free({pages}) your runs {' and '.join(w for w in said if w)}: free() adds exactly the pages "
            "of the call to the free runs"
        )
    return "the right pages are free, in other runs: merge each freed page with the free runs next to it"


SPLIT_REST_END = (
    "the rest of a run that allocate() splits keeps the old run's end: record that end for the rest after "
    "taking out the old run's entries, not before (taking the old end out afterwards takes out the rest's, "
    "as both are the same key), so a page freed just after the rest joins it"
)


def _free_after(cls, split: bool) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): free([0, 1, 2]) then allocate(1)
    (page 0, so the rest of the run is (1, 2)) when `split`, else free([1, 2]); then free([3]), page 3
    just after the run (1, 2). The runs after it, 'raised ...', or None when the steps before it went
    otherwise."""

    def setup(a) -> bool:
        if split:
            a.free([0, 1, 2])
            if a.allocate(1) != [0]:
                return False
        else:
            a.free([1, 2])
        return [tuple(r) for r in a.runs] == [(1, 2)]

    return replay(cls, setup, lambda a: a.free([3]))


def split_end_probe(
    cls, seen: str, before: list[tuple[int, int]] = (), error: Optional[KeyError] = None
) -> Optional[Mistake]:
    """When a page freed just after the rest of a run that allocate() split does not join it, though it
    joins a run made by free(), the Mistake that says the rest's end was lost from the answer's books
    (`seen`: what the case saw; the key of a KeyError `error` is named when it is the end of a run of
    `before`)."""
    key = error.args[0] if error is not None and error.args else None
    if _free_after(cls, split=False) != [(1, 3)]:
        return None  # a page does not join the run before it at all: another mistake
    if (mistake := old_start_probe(cls, seen)) is not None:
        return mistake  # the end entry kept, with the old start, rather than lost
    got = _free_after(cls, split=True)
    if got is None or got == [(1, 3)]:
        return None
    ends = {start + length: (start, length) for start, length in before}
    where = f" ({key} is where the free run {ends[key]} ends)" if key in ends else ""
    return Mistake(
        f"{seen}{where}. On a fresh allocator of 6 pages, all handed out by allocate(6): after free([1, 2]), "
        "free([3]) gives runs [(1, 3)]; but after free([0, 1, 2]) and allocate(1), which takes page 0 and leaves "
        f"the rest (1, 2), free([3]) gives {got}: the run [1, 3) left by allocate(1) could no longer be merged on "
        "its right. Your books lost the end of the rest of a split run",
        SPLIT_REST_END,
    )


LEFT_START = (
    "a freed page finds the free run that ends just before it by that run's end, so what you store under "
    "a run's end must give that run's start (end -> start), not its length: the start is what finds the run "
    "among the runs kept by their start"
)


def _after_frees(cls, frees: list[list[int]]) -> object:
    """On a fresh allocator of 6 pages, all handed out by allocate(6): the runs after each free of `frees`,
    'raised ...' when a free raised, or None when the allocate went otherwise."""

    def step(a) -> None:
        for pages in frees:
            a.free(pages)

    return replay(cls, lambda a: True, step)


def left_start_probe(cls, seen: str) -> Optional[Mistake]:
    """When a freed page joins the run after it, and the run (1, 1) before it (whose start equals its
    length), but not the run (3, 1) before page 4, the Mistake that says the run's length was read where
    its start belongs: the index of runs by their end holds lengths (`seen`: what the case saw)."""
    if _after_frees(cls, [[4], [3]]) != [(3, 2)] or _after_frees(cls, [[1], [2]]) != [(1, 2)]:
        return None  # no merge on the right, or none on the left even at (1, 1): another mistake
    got = _after_frees(cls, [[3], [4]])
    if got is None or got == [(3, 2)]:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out by allocate(6): free([1]) then free([2]) gives "
        f"runs [(1, 2)], and free([4]) then free([3]) gives [(3, 2)], but free([3]) then free([4]) gives {got}. "
        "Page 2 joins the run (1, 1), whose start and length are both 1, yet page 4 does not join the run (3, 1): "
        "your free() reads the left run's length where its start should be",
        LEFT_START,
    )


def good_free_failed(
    cls, seen: str, pages: list[int], before: list[tuple[int, int]], got=None, error: Optional[Exception] = None
) -> Optional[Mistake]:
    """free(pages) of pages in use, with free runs `before`, raised KeyError `error` or left the runs `got`
    (`seen`: what the case saw). The probes that may name why, tried in order; None when none confirms its
    mistake on its own small allocator. A ValueError is the answer's own check refusing a page in use: only
    the page right after a free run read as free is probed (run_end.py); an IndexError, only the run after
    the page read past the end of the runs (right_end.py)."""
    if isinstance(error, ValueError):
        return run_end_probe(cls, seen, pages, before)
    if isinstance(error, IndexError):  # only the run after the page read past the end of a list of runs
        return right_end_probe(cls, seen)
    if 0 in pages and (mistake := left_wrap_probe(cls, seen)) is not None:  # page 0's left neighbour at -1
        return mistake
    if error is None and (mistake := one_run_probe(cls, pages, before, got)) is not None:
        return mistake
    if error is not None and (mistake := left_pop_probe(cls, seen)) is not None:
        return mistake
    return left_start_probe(cls, seen) or split_end_probe(cls, seen, before, error) or exact_fit_end_probe(cls, seen)
