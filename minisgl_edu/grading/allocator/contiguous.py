"""Exercise 4, stretch — a page allocator that hands out contiguous runs of pages, best fit:
`ContiguousPageAllocator(num_pages)` with `allocate(n)`, `free(pages)`, `num_free` and `runs`.

The base part's allocator may hand out any free ids. This one keeps the free pages as maximal runs of consecutive ids
(`runs`: sorted `(start, length)` pairs, two runs never touch) and serves `allocate(n)` from the start of the smallest
run that holds `n` pages (ties: the lowest id). When no single run holds `n` but enough pages are free in all, it
still succeeds: it takes the largest run whole (ties: the lowest id) and serves what is left by the same rule, again
and again. Pages come back in increasing order; `free` merges a freed page with the free runs on both sides, and
refuses every bad call (double free, an id never handed out, the same id twice) with ValueError, changing nothing.

The package has no such allocator; the grader's reference is `ReferenceContiguousAllocator` below, kept simple:
a set of free pages, with the runs read off it when needed. Its answer is fully determined, so the cases compare
the student's pages and runs with it after every step. The engine case swaps the student's class into
`scheduler.cache` as the base part does, with few pages and requests of different lengths so that the free pages
fragment, and compares every `allocate` the cache manager makes with the reference's. Graded on its own score line
("allocator_contiguous"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.allocator.best_fit_n import best_fit_takes_n
from minisgl_edu.grading.allocator.closest_size import closest_size_probe
from minisgl_edu.grading.allocator.contiguous_exact_fit import exact_fit_end_probe
from minisgl_edu.grading.allocator.contiguous_probes import (
    fallback_not_counted,
    free_difference,
    good_free_failed,
    left_merge,
    refusal_probe,
    unmerged_probe,
)
from minisgl_edu.grading.allocator.contiguous_reads import mispaired, read_runs, returned_pages, runs_counted
from minisgl_edu.grading.allocator.filtered_position import filtered_position_probe
from minisgl_edu.grading.allocator.frees import free_nothing
from minisgl_edu.grading.allocator.one_index import one_index
from minisgl_edu.grading.allocator.range_end import range_end_probe
from minisgl_edu.grading.allocator.refusals import other_error, other_refusal, other_why
from minisgl_edu.grading.allocator.right_entry import right_entry_kept
from minisgl_edu.grading.allocator.runs import (
    OVERLAP,
    RUNS_AS_ENDS,
    ReferenceContiguousAllocator,
    _wrong_pages,
    refused,
    run_shape,
    runs_as_ends,
    touching,
)
from minisgl_edu.grading.allocator.runs_snapshot import allocate_key_error
from minisgl_edu.grading.allocator.scenes import TAKE_NOTHING, _num_free, allocator_case, merge_hint
from minisgl_edu.grading.allocator.shortage import not_raised
from minisgl_edu.grading.allocator.stale_runs import handed_out_still_free
from minisgl_edu.grading.allocator.swapped_run import swapped_run_probe
from minisgl_edu.grading.core import Case, Mistake, expect
from minisgl_edu.grading.harness import remember, run_requests, tiny_model
from minisgl_edu.kvcache.allocator import OutOfPages
from minisgl_edu.kvcache.allocator import PageAllocator as package_allocator

# --- the student's allocator next to the reference (runs and num_free read by contiguous_reads.py) --

REPEAT = (
    "a page listed twice in the same call raises ValueError: each copy passes a check against the pages in use "
    "made before any is freed, so also refuse a repeat within the list (len(set(pages)) != len(pages)) before "
    "freeing any"
)
REPEAT_WHY = (
    ". Every page of the call is in use, so a check against the pages in use lets both copies through, and "
    "freeing the second copy failed"
)


@dataclass
class _Pair:
    """The student's allocator and the reference, driven by the same calls."""

    mine: object
    ref: ReferenceContiguousAllocator

    @classmethod
    def new(cls, impl, num_pages: int) -> "_Pair":
        return cls(impl(num_pages), ReferenceContiguousAllocator(num_pages))

    def same_state(self, after: str, freed: list[int] = ()) -> None:
        want_runs, got_runs = self.ref.runs, read_runs(self.mine)
        want_free, got_free = self.ref.num_free, _num_free(self.mine)
        if got_runs != want_runs:
            seen = f"after {after}, your runs are {got_runs}"
            cls = type(self.mine)
            mistake = one_index(cls, seen) or mispaired(cls, seen, got_runs, want_runs) or right_entry_kept(cls, seen)
            if mistake is not None:  # before the shape: one dict, wrong pairs, a stale entry, overlap or touch
                raise mistake
            shape = run_shape(got_runs)
            if shape is not None and (shape[1] != OVERLAP or not runs_as_ends(got_runs, want_runs)):
                raise Mistake(f"after {after}, {shape[0]} (expected {want_runs})", shape[1])
            ends = runs_as_ends(got_runs, want_runs)
            if ends:
                raise Mistake(f"after {after}, {ends}", RUNS_AS_ENDS)
            if got_runs != sorted(got_runs):
                why = "runs must be sorted by their start"
            else:
                why = touching(got_runs) or ""
                told = f"after {after}, your runs are {got_runs}, expected {want_runs}"
                mistake = left_merge(cls, told, bool(why)) if freed else None
                if mistake is not None:
                    raise mistake
                if why:
                    why += ": free must merge a freed page with the free run just before it and the one just after it"
            raise Mistake(
                f"after {after}, your runs are {got_runs}, expected {want_runs}" + (f"; {why}" if why else ""),
                "keep the runs sorted by their start"
                if got_runs != sorted(got_runs)
                else merge_hint(got_runs, freed)
                if why
                else "",
            )
        if got_free != want_free:
            seen = f"after {after}, num_free is {got_free}, expected {want_free} (runs {want_runs})"
            raise runs_counted(type(self.mine), seen) or AssertionError(seen)

    def allocate(self, n: int, why: str = "") -> list[int]:
        before = self.ref.runs
        want = self.ref.allocate(n)
        try:
            got = returned_pages(self.mine, n, self.mine.allocate(n))
        except OutOfPages as e:
            seen = (
                f"allocate({n}) with {self.ref.num_free} pages free raised OutOfPages (num_free {_num_free(self.mine)})"
            )
            raise runs_counted(type(self.mine), seen) or Mistake(*refused(n, before)) from e
        except (KeyError, ValueError) as e:  # a run looked up that is gone, or min() of no runs left
            seen, cls = f"allocate({n}) raised {type(e).__name__}: {e}", type(self.mine)
            keyed = allocate_key_error(cls, seen, before, e) if isinstance(e, KeyError) else None
            mistake = keyed or range_end_probe(cls, seen)
            if mistake is None:
                raise
            raise mistake from (e if keyed else None)  # range_end's crash comes after the slip: its line misleads
        assert isinstance(got, list) and all(isinstance(p, int) for p in got), (
            f"allocate({n}) returned {got!r}: it must return a list of page ids"
        )
        if got != want:
            msg, hint = _wrong_pages(n, before, got, want, why)
            seen = f"allocate({n}) with free runs {before} gave {got}, expected {want}"
            cls = type(self.mine)
            raise (
                unmerged_probe(cls, seen)
                or closest_size_probe(cls, msg)
                or filtered_position_probe(cls, seen)  # seen, not msg: msg may call the pages first fit
                or swapped_run_probe(cls, seen)
                or range_end_probe(cls, seen)
                or best_fit_takes_n(cls, seen)  # the best-fit step after the fallback took n pages, not need
                or Mistake(msg, hint)
            )
        handed_out_still_free(self.mine, n, got)  # a page of got still listed in the runs
        if read_runs(self.mine) == self.ref.runs:
            mistake = fallback_not_counted(n, before, got, _num_free(self.mine) - self.ref.num_free)
            if mistake is not None:
                raise mistake
        self.same_state(f"allocate({n}) gave {got}")
        return got

    def free(self, pages: list[int]) -> None:
        before = self.ref.runs
        self.ref.free(pages)
        try:
            self.mine.free(list(pages))
        except (KeyError, ValueError, IndexError) as e:  # a run gone, a page in use refused, a read past the end
            seen = f"free({pages}) raised {type(e).__name__}: {e}"
            mistake = good_free_failed(type(self.mine), seen, pages, before, error=e)
            if mistake is None:
                raise
            raise mistake from e
        try:
            self.same_state(f"free({pages})", pages)
        except AssertionError as e:
            got = read_runs(self.mine)
            seen = f"after free({pages}) your runs are {got}, expected {self.ref.runs}"
            mistake = good_free_failed(type(self.mine), seen, pages, before, got)
            if mistake is None:
                raise
            raise mistake from e

    def refuse(self, pages: list[int], why: str) -> None:
        before_runs, before_free = self.ref.runs, self.ref.num_free
        in_use = set(range(self.ref.num_pages)) - self.ref._free
        # every page of the call is in use: the only fault is a page listed twice
        only_repeat = len(set(pages)) < len(pages) and set(pages) <= in_use
        try:
            self.ref.free(pages)
        except ValueError:
            pass
        else:
            raise AssertionError(f"setup: the reference accepted free({pages})")
        try:
            self.mine.free(list(pages))
        except ValueError:
            pass
        except Exception as e:
            msg = f"free({pages}) raised {type(e).__name__}; {why} must raise ValueError"
            if other_refusal(type(self.mine), repeats=True) == type(e).__name__:  # right checks, wrong error
                raise Mistake(msg + other_why(type(e).__name__, True), other_error(type(e).__name__)) from e
            if only_repeat:
                raise Mistake(msg + REPEAT_WHY, REPEAT) from e
            raise AssertionError(msg) from e
        else:
            raise Mistake(
                f"free({pages}) was accepted: {why} must raise ValueError (or that page is handed out twice)",
                REPEAT
                if only_repeat
                else "refuse a page that is not in use: already free, out of range, or twice in one call",
            )
        got_runs, got_free = read_runs(self.mine), _num_free(self.mine)
        expect(
            (got_runs, got_free) == (before_runs, before_free),
            f"free({pages}) raised ValueError, but it changed your allocator: runs {before_runs} became {got_runs}, "
            f"num_free {before_free} became {got_free}. A refused free changes nothing: check every page "
            "before you put any back",
            "check every page of the call before freeing any",
        )


# --- the cases ---------------------------------------------------------------------------------


def _carve(impl, sizes: list[int], free_blocks: list[int]) -> _Pair:
    """A fresh allocator of sum(sizes) pages, cut into blocks of `sizes` by one allocate each (from
    page 0 on), then the blocks numbered in `free_blocks` given back, in that order."""
    pair = _Pair.new(impl, sum(sizes))
    pair.same_state(f"{type(pair.mine).__name__}({sum(sizes)})")
    blocks = [pair.allocate(n, "one run of free pages: take the first n") for n in sizes]
    for i in free_blocks:
        pair.free(blocks[i])
    return pair


def case_best_fit(impl):
    # Free runs (0, 3), (4, 2), (7, 6), (14, 4) of 20 pages: first fit, worst fit and best fit differ.
    pair = _carve(impl, [3, 1, 2, 1, 6, 1, 4, 2], [0, 2, 4, 6])
    pair.allocate(2, "the run of 2 at page 4 is the smallest that holds 2: an exact fit empties it")
    pair.allocate(4, "the run of 4 at page 14 fits exactly")
    pair.allocate(1, "the run of 3 at page 0 is now the smallest")
    pair.allocate(4, "only the run of 6 at page 7 holds 4: its first 4 pages, 2 stay free")
    pair.allocate(2, "two runs of 2 are left, at pages 1 and 11")


def case_ties(impl):
    # Free runs (0, 2), (3, 3), (7, 3), (11, 2) of 16 pages, given back from the highest id down.
    pair = _carve(impl, [2, 1, 3, 1, 3, 1, 2, 3], [6, 4, 2, 0])
    pair.allocate(3, "runs of 3 at pages 3 and 7 tie: the lowest id wins")
    pair.allocate(1, "runs of 2 at pages 0 and 11 tie")
    pair.allocate(2, "runs (1, 1), (7, 3), (11, 2): the run of 2 fits exactly")


def case_fragmented(impl):
    # Free runs (0, 5), (6, 2), (9, 4), (14, 2) of 17 pages: 13 free, no run holds more than 5.
    pair = _carve(impl, [5, 1, 2, 1, 4, 1, 2, 1], [0, 2, 4, 6])
    pair.allocate(7, "no run holds 7: the run of 5 whole, then 2 more by best fit: a run of 2 fits exactly")
    pair.allocate(5, "no run holds 5: the run of 4 whole, then 1 more from the smallest run")
    assert _num_free(pair.mine) == 1, "setup"
    pair.allocate(1, "the last free page")
    # Free runs (0, 5), (6, 4), (11, 2): after the run of 5, the smallest run that holds 2 is not the first.
    pair = _carve(impl, [5, 1, 4, 1, 2, 1], [0, 2, 4])
    pair.allocate(7, "no run holds 7: the run of 5 whole, then 2 more from the smallest run that holds them")
    # Runs of equal length: the largest is taken whole, the lowest id first.
    pair = _carve(impl, [3, 1, 3, 1, 3, 1, 1, 2], [4, 2, 0, 6])
    pair.allocate(8, "no run holds 8: the three runs of 3 tie as the largest, so pages 0-2, then 4-6, then 2 more")


def case_out_of_pages(impl):
    pair = _carve(impl, [4, 1, 3, 1, 2], [0, 2])
    before = pair.ref.runs
    for n in (8, 100):
        try:
            got = pair.mine.allocate(n)
        except OutOfPages:
            pass
        except Exception as e:
            raise AssertionError(
                f"allocate({n}) with 7 pages free raised {type(e).__name__}: raise OutOfPages (the scheduler catches that one)"
            ) from e
        else:
            raise not_raised(impl, f"allocate({n}) with 7 pages free", got)
        got = read_runs(pair.mine)
        expect(
            got == before and _num_free(pair.mine) == 7,
            f"allocate({n}) raised OutOfPages but took pages: runs {before} became {got}, num_free is "
            f"{_num_free(pair.mine)}. Check n against num_free before you take anything",
            TAKE_NOTHING,
        )
    pair.allocate(7, "all 7 free pages are still there")
    pair.allocate(0, "allocate(0) takes nothing")
    # A pool of no pages: nothing is free, so there is no run at all, not even (0, 0).
    empty = impl(0)
    got = read_runs(empty)
    expect(
        got == [] and _num_free(empty) == 0,
        f"{type(empty).__name__}(0).runs is {got} (num_free {_num_free(empty)}), expected [] and 0: with no "
        "free page there is no run, and a run of length 0 is not a run",
        "an allocator of 0 pages has runs == []: never list a run of length 0, such as (0, 0)",
    )
    expect(
        empty.allocate(0) == [] and read_runs(empty) == [],
        "on an allocator of 0 pages, allocate(0) must return [] and leave runs []",
    )


def case_merge_left_first(impl):
    # Blocks [0-2], [3-4], [5-9], [10-11] of 12 pages, all in use, given back from the left: each
    # block is freed next to the free run on its left.
    pair = _carve(impl, [3, 2, 5, 2], [0, 1, 2, 3])
    pair.allocate(12, "every page is free again: one run of 12")
    # The merged run must be the one allocate chooses from, whether or not runs was read before it.
    mistake = unmerged_probe(impl, "pages freed one call at a time, each next to the free run before it")
    if mistake is not None:
        raise mistake


def case_merge_right_first(impl):
    # The same blocks freed the other way round: each is freed next to the free run on its right.
    # First, one page freed between two free runs: it joins both in one step.
    pair = _carve(impl, [3, 1, 3], [0, 2, 1])
    pair.allocate(7, "pages 0-6 are one run again")
    pair = _carve(impl, [3, 2, 5, 2], [3, 2, 1, 0])
    pair.allocate(12, "every page is free again: one run of 12")


def case_bad_free(impl):
    pair = _carve(impl, [3, 4, 3], [1])  # pages 0-2 and 7-9 in use, 3-6 free
    free_nothing(pair.mine, "with pages 0-2 and 7-9 in use", 4)
    pair.same_state("free([])")
    pair.refuse([4], "page 4, which is free,")
    pair.refuse([0, 0], "the same page twice in one call, [0, 0],")
    pair.refuse([10], "page 10 of an allocator of 10 pages (ids are 0..9)")
    pair.refuse([-1], "page -1")
    pair.refuse([2, 3], "[2, 3], where page 3 is free,")
    pair.refuse([7, 8, 9, 7], "[7, 8, 9, 7], page 7 twice,")
    good = [[2, 0], [1, 7, 9, 8]]
    for i, pages in enumerate(good):
        try:
            pair.free(pages)
        except AssertionError as e:
            if getattr(e, "hint", ""):
                raise
            raise _good_free_failed(impl, pair, good[: i + 1], e) from e
        if i == 0:
            pair.refuse([0], "page 0, freed a moment ago,")


def _good_free_failed(impl, pair: _Pair, frees: list[list[int]], e: AssertionError) -> Mistake:
    """A free of pages in use went wrong after the refused calls of case_bad_free. The same frees on a
    fresh allocator with no refused call before them tell the two causes apart: right there, a refused
    call changed the books it should have left alone; wrong there too, the free itself is wrong, and
    the hint says which pages differ."""
    try:
        control = _carve(impl, [3, 4, 3], [1])
        for pages in frees:
            control.free(pages)
    except Exception:  # wrong without the refusals too
        return Mistake(str(e), free_difference(frees[-1], pair.ref.runs, read_runs(pair.mine)))
    return Mistake(
        f"{e}. The same free{'s' if len(frees) > 1 else ''} on a fresh allocator with pages 0-2 and 7-9 in use, "
        "with no refused call before, give the right runs: one of the refused calls above changed your "
        "allocator although it raised ValueError",
        "check every page of the call before freeing any",
    )


def case_workload(impl):
    for seed, num_pages in [(1, 37), (2, 50)]:
        rng = random.Random(seed)
        pair = _Pair.new(impl, num_pages)
        held: list[list[int]] = []
        for step in range(250):
            r = rng.random()
            where = f"workload {seed} ({num_pages} pages), step {step}"
            if r < 0.5 or not held:
                n = rng.randint(0, min(12, pair.ref.num_free + 2))
                if n > pair.ref.num_free:
                    before = pair.ref.runs
                    try:
                        got = pair.mine.allocate(n)
                    except OutOfPages:
                        pass
                    else:
                        raise not_raised(impl, f"{where}: allocate({n}) with {pair.ref.num_free} free", got)
                    expect(
                        read_runs(pair.mine) == before,
                        f"{where}: allocate({n}) with {pair.ref.num_free} free raised OutOfPages, but it changed "
                        f"your runs {before} to {read_runs(pair.mine)}: check n against num_free before you take anything",
                        TAKE_NOTHING,
                    )
                    continue
                held.append(pair.allocate(n, where))
            elif r < 0.9:
                pages = held.pop(rng.randrange(len(held)))
                rng.shuffle(pages)  # the cache manager gives pages back in any order
                pair.free(pages)
            else:
                pages = held[rng.randrange(len(held))]
                if pages:
                    pair.refuse([pages[0], pages[0]], f"{where}: the same page twice in one call")


# --- the real engine -------------------------------------------------------------------------


class _Recorder:
    """The student's allocator in `scheduler.cache`, with every allocate and free written down."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[int], list[tuple[int, int]], list[int]]] = []

    @property
    def num_free(self) -> int:
        return self.inner.num_free

    def allocate(self, n: int) -> list[int]:
        before = read_runs(self.inner)
        pages = self.inner.allocate(n)
        self.calls.append(("allocate", [n], before, list(pages)))
        return pages

    def free(self, pages) -> None:
        pages = list(pages)
        before = read_runs(self.inner)
        self.inner.free(pages)
        self.calls.append(("free", pages, before, []))


# The pool's 256 pages are many more than a few short requests need: the allocator is given only
# ENGINE_PAGES of them, so requests wait for pages, finish at different times and leave holes
# between pages still in use. The scheduler admits a request only when its whole run fits
# (prompt + max_tokens), so it never runs out mid-decode. A tiny random-weight model (harness.py)
# keeps the many steps fast; the pages, not the words, are graded here.
ENGINE_PAGES = 28
ENGINE_CONFIG = dict(max_running_requests=3, cache="naive")
ENGINE_PROMPTS = [
    [{"role": "user", "content": text}]
    for text in [
        "Say hello.",
        "What is the capital of France?",
        "Name a colour.",
        "Count to five.",
        "Écris un mot.",
        "Why is the sky blue? Answer in one short sentence please.",
        "Hi",
        "List three fruits.",
    ]
]
ENGINE_PARAMS = [SamplingParams(max_tokens=m, ignore_eos=True) for m in (9, 30, 5, 22, 14, 7, 26, 11)]


def _run(impl):
    recorder: list[_Recorder] = []

    def setup(s):
        recorder.append(_Recorder(impl(ENGINE_PAGES)))
        s.cache.allocator = recorder[0]

    got = run_requests(ENGINE_PARAMS, ENGINE_PROMPTS, setup=setup, model=tiny_model(), **ENGINE_CONFIG)
    return got, recorder[0]


def case_real_engine(impl):
    impl(4)  # an unfinished class fails here, before the engine runs
    ref, ref_calls = remember("allocator_contiguous", lambda: _run(ReferenceContiguousAllocator))
    try:
        got, calls = _run(impl)
    except (ValueError, KeyError) as e:  # a free() of pages the cache manager gives back went wrong
        probe = refusal_probe if isinstance(e, ValueError) else exact_fit_end_probe  # KeyError: a stale end entry?
        mistake = probe(impl, f"in the real engine, your free() raised {type(e).__name__} ({e})")
        if mistake is None:
            raise
        raise mistake from e
    for i, (mine, want) in enumerate(zip(calls.calls, ref_calls.calls)):
        op, args, before, pages = want
        assert mine[:2] == want[:2], (
            f"call {i} of the cache manager: {op}({args[0] if op == 'allocate' else args}) expected, "
            f"got {mine[0]}({mine[1][0] if mine[0] == 'allocate' else mine[1]})"
        )
        if mine[2] != before:
            shape = run_shape(mine[2])
            if shape is not None and (shape[1] != OVERLAP or not runs_as_ends(mine[2], before)):
                raise Mistake(f"in the real engine, before call {i} ({op}), {shape[0]} (expected {before})", shape[1])
            ends = runs_as_ends(mine[2], before)
            if ends:
                raise Mistake(f"in the real engine, before call {i} ({op}), {ends}", RUNS_AS_ENDS)
            why = touching(mine[2])
            raise AssertionError(
                f"in the real engine, before call {i} ({op}) your runs were {mine[2]}, expected {before}"
                + (f"; {why}: free must merge a freed page with the free runs on both sides" if why else "")
            )
        if op == "allocate":
            if mine[3] != pages:
                msg, hint = _wrong_pages(args[0], before, mine[3], pages, f"call {i}")
                seen = f"in the real engine, call {i}: allocate({args[0]}) with free runs {before} gave {mine[3]}"
                raise unmerged_probe(impl, seen) or Mistake("in the real engine, " + msg, hint)
    assert len(calls.calls) == len(ref_calls.calls), (
        f"the cache manager called your allocator {len(calls.calls)} times, the reference {len(ref_calls.calls)}"
    )
    for uid in ref.tokens:
        assert got.tokens.get(uid) == ref.tokens[uid], (
            f"request {uid}: the engine produced different tokens with your allocator (two requests wrote the same page?)"
        )
    missing = ENGINE_PAGES - _num_free(calls.inner)
    assert missing == 0, f"{missing} page(s) are missing after all requests ended"
    runs = read_runs(calls.inner)
    assert runs == [(0, ENGINE_PAGES)], (
        f"every page is free after the requests ended, so runs must be [(0, {ENGINE_PAGES})], not {runs}"
    )


CASES = [
    Case("stretch: best fit, not first fit", case_best_fit, "the smallest free run that holds n pages"),
    Case("stretch: ties go to the lowest id", case_ties, "of two runs of the same length, the one that starts lower"),
    Case(
        "stretch: fragmented, enough pages in all",
        case_fragmented,
        "num_free >= n must succeed even if no run holds n pages",
    ),
    Case("stretch: out of pages takes nothing", case_out_of_pages, "compare n with num_free before taking any page"),
    Case(
        "stretch: coalescing, left neighbour freed first",
        case_merge_left_first,
        "a freed page joins the free run that ends just before it",
    ),
    Case(
        "stretch: coalescing, right neighbour freed first",
        case_merge_right_first,
        "a freed page joins the free run that starts just after it",
    ),
    Case("stretch: bad frees change nothing", case_bad_free, "check every page of the call before freeing any"),
    Case("stretch: many steps against the reference", case_workload, "pages and runs are compared after every step"),
    Case(
        "stretch: in the real engine",
        case_real_engine,
        "eight requests, three at a time, in 28 pages, with your allocator in scheduler.cache",
        engine=True,
    ),
    allocator_case(ReferenceContiguousAllocator, stretch=True),
]
SYMBOL = "ContiguousPageAllocator"
SOLUTION = ReferenceContiguousAllocator
# The package's PageAllocator is the base part's answer: a class that is, subclasses or keeps one
# inside is not the student's own here either.
REFERENCES = [package_allocator]
