"""Generated scenes for exercise 4 and its stretch: an allocator (or two side by side) driven through
a run of `allocate` and `free` calls, the way the cache manager drives it between forward passes.

Where this sits in the course: the generated phase (grading/explore.py) of `allocator` and
`allocator_contiguous`, after their hand-written cases. A scene is a pool size (0 pages too) and a list of
steps: `allocate(n)` with n from 0 to past the pool, or `num_free` plus or minus one (the exact fit and
one too many); frees of what an earlier step got, whole or in part, in either order, or nothing at all;
and frees the contract refuses: a page that is free, the same page twice in one call, -1, `num_pages`, a
bad id in the middle of good ones. A second allocator built beside the first catches state kept on the class.

What is compared after each step: the call's outcome (its pages or the exception the contract names) and `num_free`.
The base part may hand out any free ids, so its pages are compared by what the contract asks of them (that many,
distinct, in range, not held by anyone); the stretch's answer is fully determined, so its pages and `runs` are
compared as they are. A refused free in the base part may give back the pages before the bad one or not: the grader
then frees each page of that call one by one (a ValueError for those already back is expected), so that both answers
go on from the same state.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Optional

from hypothesis import strategies as st

from minisgl_edu.grading.allocator.contiguous_exact_fit import exact_fit_end_probe
from minisgl_edu.grading.allocator.contiguous_probes import FALLBACK_COUNTED, whole_run_pages
from minisgl_edu.grading.allocator.contiguous_reads import free_is_runs_total, listed_runs, returned_pages
from minisgl_edu.grading.allocator.extra_id import fresh
from minisgl_edu.grading.allocator.one_call import pages_seen
from minisgl_edu.grading.allocator.refusals import PAST_THE_END, count_taken_first, refusal_marks, refused_with
from minisgl_edu.grading.allocator.right_end import right_end_probe
from minisgl_edu.grading.allocator.run_end import run_end_probe
from minisgl_edu.grading.allocator.runs import (
    FALLBACK,
    RUNS_AS_ENDS,
    ReferenceContiguousAllocator,
    _wrong_pages,
    refused,
    run_shape,
    runs_as_ends,
)
from minisgl_edu.grading.core import Mistake, expect
from minisgl_edu.grading.explore import Difference, generated
from minisgl_edu.grading.feedback import is_student_file
from minisgl_edu.kvcache.allocator import OutOfPages

TAKE_NOTHING = "check n against the free count before taking anything"
MAX_STEPS = 24
CARVE = 8  # blocks of the prelude
BAD = ("a free page", "the same page twice", "-1", "num_pages", "a bad id among good ones", "a page twice, apart")


@dataclass
class AllocScene:
    num_pages: int
    two: bool  # a second allocator beside the first (the steps say which one they call)
    # ("allocate", who, n) | ("fill", who, d) | ("free", who, k, part, newest) | ("bad", who, kind, k)
    steps: list[tuple]
    stretch: bool = False  # graded as the stretch's ContiguousPageAllocator


@st.composite
def alloc_scenes(draw: Any, stretch: bool = False) -> AllocScene:
    # A pool cut into small blocks, every other one given back: many holes, some of one size
    # (best fit's ties, a request no single run holds). Random steps follow.
    carve = draw(st.lists(st.integers(1, 4), max_size=CARVE))
    prelude = [("allocate", 0, n) for n in carve]
    if len(carve) >= 2:
        prelude.append(("free", 0, draw(st.integers(0, 1)), "every other", draw(st.booleans())))
        if draw(st.booleans()):  # most of what is free now: more than one run holds
            prelude.append(("fill", 0, draw(st.sampled_from([-2, -1]))))
    # often no page past the blocks: a full pool, whose last page is in use
    num_pages = sum(carve) + draw(st.sampled_from([0, 0, 1, 2, 4, 8, 16]) if carve else st.integers(1, 16))
    two = draw(st.integers(0, 5)) == 5  # shrinks towards one allocator
    who = st.integers(0, 1) if two else st.just(0)
    # small allocations and frees of earlier ones leave holes; then an exact fit or one too many
    step = st.one_of(
        st.tuples(st.just("allocate"), who, st.integers(0, 4)),
        st.tuples(st.just("allocate"), who, st.integers(0, num_pages + 2)),
        st.tuples(st.just("free"), who, st.integers(0, 7), st.sampled_from(["all", "all", "part"]), st.booleans()),
        st.tuples(st.just("fill"), who, st.sampled_from([-1, 0, 0, 1])),
        st.tuples(st.just("free"), who, st.integers(0, 1), st.just("every other"), st.booleans()),
        st.tuples(st.just("bad"), who, st.sampled_from(BAD), st.integers(0, 7)),
        st.tuples(st.just("bad"), who, st.sampled_from(BAD), st.integers(0, 7)),
    )
    return AllocScene(num_pages, two, prelude + draw(st.lists(step, min_size=1, max_size=MAX_STEPS)), stretch)


BAD_HINTS = {
    "a free page": "a page that is free now (freed already, or never handed out) raises ValueError",
    "the same page twice": "a page listed twice in the same call raises ValueError: it is in use only once",
    "a page twice, apart": (
        "a page listed twice in the same call raises ValueError, wherever the two are in the list (the "
        "cache manager's lists are not sorted)"
    ),
    "-1": "an id that is not a page (-1, num_pages) raises ValueError: ids are 0..num_pages-1, and a list index of -1 is no page",
    "num_pages": "an id that is not a page (-1, num_pages) raises ValueError: ids are 0..num_pages-1",
    "a bad id among good ones": "a bad id anywhere in the call raises ValueError, also after good pages",
}


def _name(scene: AllocScene, who: int) -> str:
    return ("A", "B")[who] + "." if scene.two else ""


def _step_text(scene: AllocScene, i: int) -> str:
    op, who, *args = scene.steps[i]
    me = _name(scene, who)
    if op == "allocate":
        return f"{me}allocate({args[0]})"
    if op == "fill":
        return f"{me}allocate(num_free{({-2: ' - 2', -1: ' - 1', 0: '', 1: ' + 1'})[args[0]]})"
    if op == "free":
        k, part, newest = args
        if part == "every other":
            return (
                f"{me}free(the pages of every other allocation still held, from #{k} on, in one call, "
                f"{'newest' if newest else 'oldest'} id first)"
            )
        what = "the first half of" if part == "part" else "all"
        return (
            f"{me}free({what} the pages of its allocation #{k} still held, "
            f"{'newest' if newest else 'oldest'} id first; free([]) if none is held)"
        )
    kind, k = args
    return f"{me}free(...) with {kind}" + (f" (pages of its allocation #{k})" if kind in BAD[4:] else "")


def show(scene: AllocScene) -> str:
    made = "ContiguousPageAllocator" if scene.stretch else "PageAllocator"
    made = f"two {made}s, A and B, each" if scene.two else made
    lines = [f"  {made} of num_pages={scene.num_pages}, then:"]
    lines += [f"  step {i}: {_step_text(scene, i)}" for i in range(len(scene.steps))]
    lines.append(f"  step {len(scene.steps)}: free every page still held, then allocate(num_pages) on each")
    lines.append(
        "  (allocation #k: the k-th allocate of that allocator whose pages are still held, counted from 0, modulo their number)"
    )
    return "\n".join(lines)


def _num_free(a) -> int:
    """`a.num_free`, read as the cache manager reads it: a number, never a method."""
    got = a.num_free
    expect(
        not callable(got),
        "num_free is a method: make it a property (the cache manager reads allocator.num_free)",
        "put @property above def num_free(self)",
    )
    expect(isinstance(got, int), f"num_free is {got!r}, not an int", "num_free is a count of pages: an int")
    if got < 0 and (mistake := count_taken_first(type(a), got)) is not None:
        raise mistake
    expect(
        got >= 0,
        f"num_free is {got}: a count of free pages is never negative",
        "num_free is the length of this allocator's own free list (state on self, set in __init__)",
    )
    return got


class _Books:
    """What the grader knows of one allocator from the calls alone: the pages each allocation got
    and still holds. The free pages are the rest of range(num_pages)."""

    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.held: list[list[int]] = []

    def holding(self) -> set[int]:
        return {p for pages in self.held for p in pages}

    def free_ids(self) -> list[int]:
        mine = self.holding()
        return [p for p in range(self.num_pages) if p not in mine]

    def group(self, k: int) -> Optional[list[int]]:
        live = [g for g in self.held if g]
        return live[k % len(live)] if live else None

    def give_back(self, pages: list[int]) -> None:
        gone = set(pages)
        self.held = [[p for p in g if p not in gone] for g in self.held]
        self.held = [g for g in self.held if g]


def _call(fn, *args) -> tuple[str, Any]:
    """Run one call of the answer: ("returned", value), or its exception as an outcome to compare,
    with the exception itself (for a probe that names why). The exceptions the contract names are
    compared by type; any other is shown with the answer's line, and the scene stops there (what
    follows would only repeat it)."""
    try:
        return "returned", fn(*args)
    except (OutOfPages, ValueError) as e:
        return f"raises {type(e).__name__}", e  # the error itself, for a probe that names why
    except (NotImplementedError, Mistake):
        raise
    except Exception as e:
        mine = [f for f in traceback.extract_tb(e.__traceback__) if is_student_file(f.filename)]
        at = f" (line {mine[-1].lineno} of your {mine[-1].name})" if mine else ""
        return f"raised {type(e).__name__}: {e}{at}", e


def _bad_pages(kind: str, books: _Books, k: int) -> Optional[list[int]]:
    if kind == "a free page":
        free = books.free_ids()
        return [free[0]] if free else None
    if kind == "the same page twice":
        g = books.group(k)
        return [g[0], g[0]] if g else None
    if kind == "-1":
        return [-1]
    if kind == "num_pages":
        return [books.num_pages]
    if kind == "a page twice, apart":  # [p, q, p]: the duplicate is not next to itself
        held = sorted(books.holding())
        return [held[0], held[1], held[0]] if len(held) >= 2 else None
    g = books.group(k)
    return (g[:2] + [books.num_pages] + g[2:]) if g else [books.num_pages]


def play(cls: Any, scene: AllocScene, stretch: bool = False, upto: Optional[int] = None) -> dict:
    """Drive `cls` through the scene. The base part (stretch=False) reports pages by what the
    contract asks of them; the stretch reports them as they are, and its runs after each step.
    With `upto`, stops before that step and returns the runs and num_free of the allocator it calls
    (the stretch's hints read them)."""
    allocs = [fresh(cls, scene.num_pages) for _ in range(2 if scene.two else 1)]  # extra_id.py: one id too many?
    books = [_Books(scene.num_pages) for _ in allocs]
    out: dict[str, Any] = {}

    def after(i: int, who: int) -> None:
        out[f"step {i}: num_free after it"] = _num_free(allocs[who])
        if stretch:
            out[f"step {i}: runs after it"] = listed_runs(allocs[who])
            free_is_runs_total(allocs[who], i)
        if scene.two:  # the other allocator must not have moved
            out[f"step {i}: the other allocator's num_free"] = _num_free(allocs[1 - who])

    for i, (op, who, *args) in enumerate(scene.steps):
        if upto is not None and i == upto:
            return {"runs": [tuple(r) for r in allocs[who].runs], "num_free": allocs[who].num_free}
        a, b = allocs[who], books[who]
        field = f"step {i}: the call's outcome"
        if op in ("allocate", "fill"):
            free = b.num_pages - len(b.holding())
            n = args[0] if op == "allocate" else max(0, free + args[0])
            how, got = _call(a.allocate, n)
            if how != "returned":
                out[field] = how
                if how.startswith("raised") and n <= free:
                    return out
            elif stretch:
                out[field] = returned_pages(a, n, got)
                if isinstance(got, list) and got:
                    b.held.append(list(got))
            else:
                out[field], good = pages_seen(type(a), got, n, b)
                if not good:
                    return out  # the first wrong step is the difference: what follows only repeats it
                if got:
                    b.held.append(list(got))
        elif op == "free":
            k, part, newest = args
            g = b.group(k) or []
            if part == "every other":  # holes between the allocations still held
                g = [p for j, h in enumerate(b.held) if j % 2 == k for p in h]
            pages = g[: (len(g) + 1) // 2] if part == "part" else list(g)
            pages = sorted(pages, reverse=newest)
            how, e = _call(a.free, list(pages))
            out[field] = "accepted" if how == "returned" else how
            if how != "returned":
                _refused_in_use(a, pages, e, stretch)
                return out  # a good free refused: what follows would only repeat it
            b.give_back(pages)
        else:
            kind, k = args
            pages = _bad_pages(kind, b, k)
            if pages is None:  # nothing held (or nothing free) to build it from
                out[field] = "(skipped: no such page now)"
                after(i, who)
                continue
            how, _ = _call(a.free, list(pages))
            out[field] = "accepted" if how == "returned" else how
            if how == "returned":
                return out  # an accepted bad free is the difference: what follows only repeats it
            refused_with(type(a), f"step {i}", how, repeats=stretch)  # right checks, another exception?
            if not stretch:
                _settle(a, b, pages)
        after(i, who)
    end = len(scene.steps)
    for who, (a, b) in enumerate(zip(allocs, books)):
        field = f"step {end}: {_name(scene, who)}free of every page still held"
        for g in list(b.held):
            how, e = _call(a.free, list(g))
            if how != "returned":
                _refused_in_use(a, g, e, stretch)
                out[field] = how
                return out
        out[field] = "accepted"
        how, got = _call(a.allocate, scene.num_pages)
        field = f"step {end}: {_name(scene, who)}allocate(num_pages) once every page came back"
        if how != "returned":
            out[field] = how
        else:
            out[field] = (
                returned_pages(a, scene.num_pages, got)
                if stretch
                else pages_seen(type(a), got, scene.num_pages, _Books(scene.num_pages))[0]
            )
    return out


def _refused_in_use(a: Any, pages: list[int], e: Any, stretch: bool = False) -> None:
    """A free of pages in use that raised ValueError: when fresh allocators show that a refused free
    changed a page's record (refusals.refusal_marks), or in the stretch that the page after a free run
    reads as free (run_end.py), name that. The stretch's KeyError: when a fresh allocator shows the end
    entry of a run an exact fit emptied left behind, name that; its IndexError: when the run after a page
    that lies after every free run is read past the end (right_end.py), name that. Else the scene's hint
    stands."""
    mistake, seen = None, f"free({sorted(pages)}) of pages in use raised {type(e).__name__}: {e}"
    if isinstance(e, ValueError):
        mistake = refusal_marks(type(a), f"the pages {sorted(pages)}", e)
        mistake = mistake or (run_end_probe(type(a), seen) if stretch else None)
    elif isinstance(e, KeyError) and stretch:
        mistake = exact_fit_end_probe(type(a), seen)
    elif isinstance(e, IndexError) and stretch:
        mistake = right_end_probe(type(a), seen)
    if mistake is not None:
        raise mistake


def _settle(a: Any, b: _Books, pages: list[int]) -> None:
    """After a refused free, free each page of the call that was held, one by one: the contract lets
    the pages before the bad one be back or not; a ValueError says this one was back already."""
    mine = b.holding()
    for p in dict.fromkeys(pages):
        if p in mine:
            try:
                a.free([p])
            except ValueError:
                pass
    b.give_back([p for p in pages if p in mine])


# --- hints: each names the mistake its field shows ---------------------------------------------


def _op(scene: AllocScene, field: str) -> tuple:
    i = int(field.split(":")[0].split()[1])
    return scene.steps[i] if i < len(scene.steps) else ("end", 0)


SHARED = "state on self, set in __init__: state kept on the class is shared by every allocator"


def outcome_hint(scene: AllocScene, diff: Difference) -> str:
    op = _op(scene, diff.field)
    want, got = str(diff.expected), str(diff.got)
    if scene.two and got.startswith("raise") and not want.startswith("raise"):
        return f"two allocators side by side, and a call that works on one alone failed: {SHARED}"
    if op[0] == "end" and not any(w in got for w in ("still held", " twice", "not a page id")):
        return "once every page came back, allocate(num_pages) gets every page: no page may be lost or duplicated"
    if want == "raises OutOfPages":
        if got.startswith("raise"):
            return "raise OutOfPages (from minisgl_edu.kvcache.allocator), the exception the scheduler catches"
        return "if fewer than n pages are free, raise OutOfPages and take nothing"
    if got == "raises OutOfPages":
        if want == "[]":
            return "refuse only when n > num_free: allocate(0) always fits, even with no page free"
        return "allocate(n) succeeds whenever n <= num_free (asking for exactly num_free gets every free page)"
    if want == "raises ValueError":
        if (
            got.startswith("raised IndexError")
            and op[0] == "bad"
            and op[2] in ("num_pages", "a bad id among good ones")
        ):
            return PAST_THE_END  # the only id not in 0..num_pages-1 in these calls is num_pages
        if got.startswith("raised"):
            repeat = op[0] == "bad" and op[2] in ("the same page twice", "a page twice, apart")
            return BAD_HINTS[op[2]] if repeat else "a page that is not in use raises ValueError"
        return BAD_HINTS.get(op[2], BAD_HINTS["a bad id among good ones"]) if op[0] == "bad" else ""
    if want == "accepted":
        return "a page in use may be freed in any order and any grouping; free([]) gives back nothing and is no error"
    if "still held" in got or " twice" in got:
        return "a page in use is never handed out twice: take only pages that are free now"
    if "not a page id" in got:
        return "page ids come from range(num_pages): hand out the freed ids again"
    if "pages for allocate" in got:  # the slice remark only where it can be the cause: free[-0:] is all
        return "allocate(n) returns exactly n pages" + (
            "; mind slices like free[-n:] when n is 0" if "allocate(0)" in got else ""
        )
    return "allocate(n) returns a list of n distinct free page ids"


def num_free_hint(scene: AllocScene, diff: Difference) -> str:
    op = _op(scene, diff.field)
    if op[0] == "bad" and scene.stretch:
        return "check every page of the call before freeing any: a refused free changes nothing"
    if op[0] == "bad" and isinstance(diff.got, int) and isinstance(diff.expected, int) and diff.got < diff.expected:
        return (
            "a refused free may give back the pages before the bad one or none of them, but every page "
            "stays either in use or free: none is lost, and num_free counts each page that went back, those "
            "before the bad one too (count each page as it goes back, not len(pages) after the loop)"
        )
    if op[0] == "bad":
        return (
            "a refused free may give back the pages before the bad one or none of them, but every page "
            "stays either in use or free: none is lost, none is free twice"
        )
    if op[0] in ("allocate", "fill") and scene.stretch:
        fallback = _fallback_hint(scene, diff, op)
        if fallback:
            return fallback
    if op[0] in ("allocate", "fill"):
        return "a refused allocate takes nothing: check n against the free count before taking any page"
    return "num_free counts the free pages: freed pages come back, allocated ones leave"


def _fallback_hint(scene: AllocScene, diff: Difference, op: tuple) -> Optional[str]:
    """num_free is too high after an allocate that succeeded, by exactly the pages of the runs it took
    whole because no run held n: the hint that they were never counted in use; None otherwise."""
    i = int(diff.field.split(":")[0].split()[1])
    before = play(ReferenceContiguousAllocator, scene, stretch=True, upto=i)
    n = op[2] if op[0] == "allocate" else max(0, before["num_free"] + op[2])
    if n > before["num_free"] or not isinstance(diff.got, int) or not isinstance(diff.expected, int):
        return None
    whole = sum(length for _, length in whole_run_pages(n, before["runs"]))
    return FALLBACK_COUNTED if whole and diff.got - diff.expected == whole else None


MERGE = "a freed page joins the free run just before it and the one just after it"


def merge_hint(runs: list[tuple[int, int]], freed: list[int]) -> str:
    """The hint for free runs that touch after `free(freed)`: the side on which the freed pages
    were not merged, or both sides. Of two touching runs, the one that holds pages freed later (in
    the call's order) missed the other: a freed page next to an old free run is freed after it."""
    order = {p: i for i, p in enumerate(freed)}

    def when(run: tuple[int, int]) -> list[int]:
        return [order[p] for p in range(run[0], run[0] + run[1]) if p in order] or [-1]

    missed = set()
    for a, b in zip(runs, runs[1:]):
        if a[0] + a[1] == b[0] and min(when(b)) > max(when(a)):
            missed.add("before")
        elif a[0] + a[1] == b[0] and min(when(a)) > max(when(b)):
            missed.add("after")
    if missed == {"before"}:
        return "a freed page joins the free run that ends just before it"
    if missed == {"after"}:
        return "a freed page joins the free run that starts just after it"
    if missed:
        return "merge on both sides at once: a freed page joins the run just before it and the one just after it"
    return MERGE


def runs_hint(scene: AllocScene, diff: Difference) -> str:
    got = diff.got
    op = _op(scene, diff.field)
    if runs_as_ends(got, diff.expected):
        return RUNS_AS_ENDS
    if isinstance(got, list) and all(isinstance(r, tuple) and len(r) == 2 for r in got):
        shape = run_shape(got)
        if shape is not None:
            return shape[1]
    if isinstance(got, list) and got != sorted(got):
        return "keep the runs sorted by their start"
    if isinstance(got, list) and any(s1 + n1 == s2 for (s1, n1), (s2, _) in zip(got, got[1:])):
        return MERGE
    if op[0] == "bad":
        return "check every page of the call before freeing any: a refused free changes nothing"
    if op[0] == "free":
        return "free gives back only the pages of the call (any grouping: part of an allocation too)"
    if op[0] in ("allocate", "fill"):
        i = int(diff.field.split(":")[0].split()[1])
        before = play(ReferenceContiguousAllocator, scene, stretch=True, upto=i)
        n = op[2] if op[0] == "allocate" else max(0, before["num_free"] + op[2])
        if n > before["num_free"]:
            return "a refused allocate takes nothing: check n against num_free before taking any page"
        return "what is left of a run of (start, length) after taking n pages is (start + n, length - n)"
    return "runs are the maximal runs of free pages, sorted by start"


def _stretch_outcome_hint(scene: AllocScene, diff: Difference) -> str:
    op = _op(scene, diff.field)
    want, got = diff.expected, diff.got
    if op[0] == "end" and isinstance(want, list) and isinstance(got, list) and sorted(got) == want:
        return "return the pages in increasing order"
    if op[0] in ("allocate", "fill") and isinstance(want, list) and isinstance(got, list):
        i = int(diff.field.split(":")[0].split()[1])
        before = play(ReferenceContiguousAllocator, scene, stretch=True, upto=i)["runs"]
        msg, hint = _wrong_pages(len(want), before, got, want, "")
        why = msg.split(": ", 1)[1] if ": " in msg else ""
        return why or hint or "allocate(n) takes the first n pages of the smallest free run that holds them"
    if op[0] in ("allocate", "fill") and got == "raises OutOfPages" and isinstance(want, list):
        i = int(diff.field.split(":")[0].split()[1])
        hint = refused(len(want), play(ReferenceContiguousAllocator, scene, stretch=True, upto=i)["runs"])[1]
        return hint + (": take pages from several runs" if hint == FALLBACK else "")
    return outcome_hint(scene, diff)


def _hints(stretch: bool) -> dict:
    hints: dict[str, Any] = {}
    for i in range(CARVE + 3 + MAX_STEPS):
        hints[f"step {i}: the call's outcome"] = _stretch_outcome_hint if stretch else outcome_hint
        hints[f"step {i}: num_free after it"] = num_free_hint
        hints[f"step {i}: runs after it"] = runs_hint
        hints[f"step {i}: the other allocator's num_free"] = SHARED
        for who in ("", "A.", "B."):
            hints[f"step {i}: {who}allocate(num_pages) once every page came back"] = (
                _stretch_outcome_hint if stretch else outcome_hint
            )
            hints[f"step {i}: {who}free of every page still held"] = (
                "every page an allocate handed out and no free gave back is still in use, and may be freed"
            )
    return hints


def allocator_case(reference: Any, stretch: bool = False, examples: Optional[int] = None) -> Any:
    """The generated case of `allocator` (stretch=False) or `allocator_contiguous`."""
    examples = examples or 200
    what = "pages and runs compared" if stretch else "the invariant checked"
    return generated(
        ("stretch: " if stretch else "") + f"generated: {examples} runs of allocate and free, {what} after each step",
        alloc_scenes(stretch),
        lambda cls, scene: play(cls, scene, stretch),
        show,
        reference,
        _hints(stretch),
        examples,
        hint="every page is free or held by exactly one owner, after every step",
    )
