"""Exercise 4 — the page allocator: a class `cls(num_pages)` with `allocate(n)`, `free(pages)`, `num_free`.

The scheduler's cache manager asks it for pages before every forward pass and gives them back
when requests finish or are aborted. The unit cases check the contract a wrong page id would
break silently (two requests writing the same page get wrong answers, nothing crashes): distinct
ids, nothing taken on failure, every bad free refused. The real-engine case swaps it into
`scheduler.cache` and runs requests to the end: same tokens as the reference, every page back.
"""

from __future__ import annotations

import random

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.allocator.appended_call import appended_call
from minisgl_edu.grading.allocator.by_position import by_position
from minisgl_edu.grading.allocator.extra_id import fresh
from minisgl_edu.grading.allocator.frees import (
    LOST_ON_REFUSAL,
    NEGATIVE_ID,
    REPEATED,
    _free,
    _frees_only_whole,
    _more_free_than_pages,
    _must_refuse,
    _pages_back_but_not_counted,
    _pages_free_twice,
    free_nothing,
    kept_list,
    not_back,
    refused_in_use,
)
from minisgl_edu.grading.allocator.from_lowest import from_lowest
from minisgl_edu.grading.allocator.frozen import frozen_count
from minisgl_edu.grading.allocator.last_page import last_page_only
from minisgl_edu.grading.allocator.not_a_list import not_a_list
from minisgl_edu.grading.allocator.one_call import no_page_twice
from minisgl_edu.grading.allocator.one_kind import one_kind_only
from minisgl_edu.grading.allocator.page_zero import page_zero_refused
from minisgl_edu.grading.allocator.scenes import TAKE_NOTHING, _num_free, allocator_case
from minisgl_edu.grading.allocator.shortage import not_raised
from minisgl_edu.grading.allocator.used_up import used_up
from minisgl_edu.grading.core import Case, Mistake, expect
from minisgl_edu.grading.harness import reference_run, run_requests
from minisgl_edu.grading.limits import CaseTimeout
from minisgl_edu.kvcache.allocator import OutOfPages
from minisgl_edu.kvcache.allocator import PageAllocator as reference

RAISE_OUT_OF_PAGES = "raise OutOfPages (from minisgl_edu.kvcache.allocator), the exception the scheduler catches"


EXACT_FIT = "an exact fit is no shortage: refuse only when n > num_free, so allocate(num_free) gets every free page"


def _refuses_an_exact_fit(cls) -> bool:
    """On fresh allocators of 3 pages: allocate(2) works, allocate(3) raises OutOfPages."""
    try:
        cls(3).allocate(2)
    except Exception:
        return False
    try:
        cls(3).allocate(3)
    except OutOfPages:
        return True
    except Exception:
        return False
    return False


OWN_LIST = (
    "allocate returns a new list of the pages it took, not the allocator's own list{own}: the "
    "allocator keeps changing its own list (clears it, pops from it, appends to it), and the caller's pages "
    "change with it; return a copy, e.g. list(...) or a slice"
)


def _own_list(a, pages) -> str | None:
    """The name of the allocator's attribute that is the very list allocate returned (the same object,
    not an equal one), or None: a caller holding that list sees every later change the allocator makes."""
    for name, value in getattr(a, "__dict__", {}).items():
        if value is pages:
            return name
    return None


def _changed_later(a, calls: list[tuple[int, list[int], list[int]]]) -> Mistake | None:
    """`calls`: (n, the list allocate(n) returned, a copy made when it returned). The Mistake that says a
    returned list changed after allocate returned it (the allocator's own list, handed out), or None."""
    for n, pages, was in calls:
        if pages != was:
            own = _own_list(a, pages)
            which = f": it is self.{own}, the allocator's own list" if own else ""
            return Mistake(
                f"allocate({n}) returned {was!r}, and that same list reads {pages!r} after the later calls{which}",
                OWN_LIST.format(own=f" (self.{own})" if own else ""),
            )
    return None


def _outside_ids(pages: list[int], num_pages: int) -> Mistake | None:
    """The Mistake that names the ids allocate handed out that are not in range(num_pages), and the page
    ids it never handed out (page 0 among them: ids counted from 1), or None when every id is a page id."""
    outside = sorted(p for p in pages if not 0 <= p < num_pages)
    if not outside:
        return None
    missing = sorted(set(range(num_pages)) - set(pages))
    never = f", and never handed out {missing}" if missing else ""
    zero = " (page 0 is a real page)" if 0 in missing else ""
    return Mistake(
        f"a new allocator of {num_pages} pages handed out {sorted(pages)}: ids {outside} are not page ids{never}",
        f"page ids are 0 .. num_pages - 1: ids {outside} are not page ids{never}{zero}",
    )


def _allocate(a, n: int) -> list[int]:
    free = getattr(a, "num_free", None)  # read as it is: _num_free's checks are the cases' own
    try:
        pages = a.allocate(n)
    except OutOfPages as e:
        if n == free and _refuses_an_exact_fit(type(a)):
            raise Mistake(
                f"allocate({n}) with {free} page{'s' if free != 1 else ''} free raised OutOfPages: asking for exactly the free pages "
                "fits (a fresh allocator of 3 pages also refuses allocate(3))",
                EXACT_FIT,
            ) from e
        seen = f"allocate({n}) with {free} pages free raised OutOfPages"
        if isinstance(free, int) and n <= free and (mistake := one_kind_only(type(a), seen)) is not None:
            raise mistake from e
        raise
    seen = f"allocate({n}) returned {type(pages).__name__} {pages!r}; it must return a list of page ids"
    if not isinstance(pages, list) and (mistake := not_a_list(type(a), seen)) is not None:
        raise mistake
    assert isinstance(pages, list), seen
    assert all(isinstance(p, int) for p in pages), f"allocate({n}) returned {pages!r}: page ids are ints"
    if len(pages) != n and (own := _own_list(a, pages)) is not None:
        raise Mistake(
            f"allocate({n}) returned {len(pages)} pages: {pages!r}. That list is self.{own}, the allocator's own "
            f"list, not a new list of the {n} pages it took",
            OWN_LIST.format(own=f" (self.{own})"),
        )
    if n > 0 and pages == [] and (mistake := used_up(type(a), f"allocate({n}) returned 0 pages: []")):
        raise mistake
    # free[-0:] is the whole free list: the slice remark can name the cause only for n == 0
    expect(
        len(pages) == n,
        f"allocate({n}) returned {len(pages)} pages: {pages!r}",
        "allocate(n) returns exactly n pages" + ("; mind slices like free[-n:] when n is 0" if n == 0 else ""),
    )
    no_page_twice(a, n, pages)  # one page several times in this one call: found before any was marked
    return pages


ALL_FREE_AT_START = "every page id 0 .. num_pages - 1 is free at the start, page 0 included"


def _pages_never_free(cls, num_pages: int) -> Mistake | None:
    """Names the page ids a fresh allocator never hands out: on a new `cls(num_pages)`, allocate(num_free)
    takes every page it counts as free; the ids of range(num_pages) not among them were never on its free
    list (a page 0 kept back as a reserved null page, a range that stops one short). None when that
    allocate does not hand out distinct ids from range(num_pages), which other checks name."""
    b = cls(num_pages)
    free = b.num_free
    try:
        pages = b.allocate(free)
    except Exception:
        return None
    if not isinstance(pages, list) or len(pages) != free or len(set(pages)) != free:
        return None
    if not all(isinstance(p, int) and 0 <= p < num_pages for p in pages):
        return None
    missing = sorted(set(range(num_pages)) - set(pages))
    if not missing:
        return None
    which = f"page {missing[0]}" if len(missing) == 1 else f"pages {missing}"
    message = (
        f"a new allocator of {num_pages} pages has num_free == {free}, expected {num_pages}: "
        f"allocate({free}) on a new one hands out {sorted(pages)}, never {which}"
    )
    if missing == [0]:
        return Mistake(message, f"{ALL_FREE_AT_START}: no page is kept back as a reserved null page")
    return Mistake(message, f"{ALL_FREE_AT_START}: put all of range(num_pages) on the free list ({which} never are)")


def case_allocate_distinct(cls):
    a = fresh(cls, 10)
    if _num_free(a) < 10 and (mistake := _pages_never_free(cls, 10)) is not None:
        raise mistake
    assert _num_free(a) == 10, f"a new allocator of 10 pages has num_free == {_num_free(a)}, expected 10"
    x = _allocate(a, 4)
    x_was = list(x)
    y = _allocate(a, 6)
    if (mistake := _changed_later(a, [(4, x, x_was)]) or _outside_ids(x + y, 10)) is not None:
        raise mistake
    assert sorted(x + y) == list(range(10)), (
        f"allocate(4) and allocate(6) gave {x!r} and {y!r}: 10 distinct ids from range(num_pages) expected"
    )
    seen = f"every page is handed out, but num_free is {_num_free(a)}"
    if _num_free(a) != 0 and (mistake := frozen_count(cls, seen)) is not None:
        raise mistake
    assert _num_free(a) == 0, f"every page is handed out, but num_free is {_num_free(a)}"


def case_allocate_zero(cls):
    a = fresh(cls, 5)
    x = a.allocate(0)
    if not isinstance(x, list) and (mistake := not_a_list(cls, f"allocate(0) returned {x!r}")) is not None:
        raise mistake  # the same pages-as-a-set slip, not a slice that took too much
    assert x == [] and _num_free(a) == 5, (
        f"allocate(0) returned {x!r} and num_free went from 5 to {_num_free(a)}: allocate(0) must take nothing"
    )
    assert len(set(_allocate(a, 5))) == 5, "after allocate(0), all 5 pages must still be there"


def case_free_and_reuse(cls):
    a = fresh(cls, 4)
    x = _allocate(a, 3)
    try:
        _free(a, x[:2], "two of the three pages of an allocate(3)")
    except CaseTimeout as e:  # the time limit stopped free() here: it never returned
        e.hint = "free() must return: go through the pages it is given once (for p in pages)"
        raise
    free = _num_free(a)
    seen = f"after freeing 2 of 3 allocated pages (of 4), num_free is {free}, expected 3"
    if free < 3:
        mistake = appended_call(cls, seen) or not_back(cls, 4, seen) or last_page_only(cls, seen)
        if mistake is not None:
            raise mistake
    if free > 3 and (mistake := frozen_count(cls, seen)) is not None:
        raise mistake
    assert free == 3, seen
    y = _allocate(a, 3)
    seen = f"allocate(3) gave {y!r} while page {x[2]} is still in use"
    if x[2] in y and (mistake := from_lowest(cls, seen)) is not None:
        raise mistake
    assert len(set(y)) == 3 and x[2] not in y, f"{seen}: a page in use is never handed out twice"
    assert set(y) | {x[2]} == set(range(4)), f"allocate(3) gave {y!r}: ids must come from range(4)"


POOL_SIZE_CHECK = (
    "compare n with the pages free now (num_free), not with num_pages, the size of the whole pool: a request "
    "that fits in the pool but not in the free pages must raise OutOfPages before taking any page"
)


def _checks_the_pool_size(cls) -> bool:
    """Whether the answer refuses only requests larger than the whole pool: a fresh allocator of 3 pages
    refuses allocate(4) with OutOfPages, yet with 2 of them taken (num_free reads 1) allocate(2) goes
    ahead and fails with another exception."""
    try:
        cls(3).allocate(4)
    except OutOfPages:
        pass
    except Exception:
        return False
    else:
        return False
    try:
        a = cls(3)
        a.allocate(2)
        if a.num_free != 1:
            return False
    except Exception:
        return False
    try:
        a.allocate(2)
    except OutOfPages:
        return False
    except Exception:
        return True
    return False


def _ran_dry(a, n: int, free: int, e: Exception) -> Mistake:
    """The Mistake for allocate(n) that raised `e` (not OutOfPages) with `free` pages free."""
    if not _checks_the_pool_size(type(a)):
        return Mistake(
            f"allocate({n}) with {free} free raised {type(e).__name__}: raise OutOfPages", RAISE_OUT_OF_PAGES
        )
    left = getattr(a, "num_free", None)
    lost = f"; num_free went from {free} to {left}: the pages taken before the error are lost" if left != free else ""
    return Mistake(
        f"allocate({n}) with {free} free raised {type(e).__name__}, while a fresh allocator of 3 pages refuses "
        "allocate(4) with OutOfPages: your check compares n with the pool size, so a request that fits in the "
        f"pool but not in the free pages passes it and runs out part-way{lost}",
        POOL_SIZE_CHECK,
    )


def case_out_of_pages(cls):
    a = fresh(cls, 3)
    _allocate(a, 2)
    try:
        got = a.allocate(2)
    except OutOfPages:
        pass
    except Exception as e:
        if _checks_the_pool_size(cls):
            raise _ran_dry(a, 2, 1, e) from e
        raise Mistake(
            f"asking for 2 pages with 1 free raised {type(e).__name__}: raise OutOfPages "
            "(the scheduler catches that one)",
            RAISE_OUT_OF_PAGES,
        ) from e
    else:
        raise not_raised(cls, "asking for 2 pages with 1 free", got)
    assert _num_free(a) == 1, f"a failed allocate must not take any page; num_free went from 1 to {_num_free(a)}"
    assert len(_allocate(a, 1)) == 1, "the last page must still be there after a failed allocate"
    _must_run_out(cls(3), 4, 3, " of 3 pages in all (more than the whole pool)", MORE_THAN_THE_POOL)


def case_double_free(cls):
    a = fresh(cls, 3)
    x = _allocate(a, 1)
    before = list(x)
    a.free(x)
    kept_list(x, before, f"free({before!r}) of the page an allocate(1) handed out")
    _must_refuse(a, before, f"freeing page {before[0]} a second time")


def case_duplicate_in_one_call(cls):
    a = fresh(cls, 4)
    p = _allocate(a, 1)[0]
    _must_refuse(a, [p, p], f"the same page twice in one call, [{p}, {p}],", REPEATED)
    free = _num_free(a)
    if free > 4:
        _more_free_than_pages(a, f"after the refused free([{p}, {p}])", free, 4)
    got = _allocate(a, free)
    assert len(set(got)) == len(got), f"allocate({free}) after free([{p}, {p}]) gave {got!r}: page {p} twice"


def case_free_never_allocated(cls):
    a = fresh(cls, 4)
    used = _allocate(a, 1)
    never = min(set(range(4)) - set(used))
    _must_refuse(a, [never], f"page {never}, which was never handed out,")
    _must_refuse(a, [4], "page 4 of an allocator of 4 pages (ids are 0..3)")
    _must_refuse(a, [-1], "page -1")
    if _num_free(a) > 4:
        _more_free_than_pages(a, "after the refused frees", _num_free(a), 4)
    assert _num_free(a) == 3, f"refused frees must change nothing; num_free is {_num_free(a)}, expected 3"
    got = _allocate(a, 3)
    assert all(0 <= p < 4 for p in got), f"allocate(3) gave {got!r}: a refused id was put on the free list"
    # every page is in use now, page 3 too: a table of the pages looked up with p = -1 reads page 3's entry
    _must_refuse(a, [-1], "page -1, while page 3 (the last) is in use,", NEGATIVE_ID)
    assert _num_free(a) == 0, f"a refused free([-1]) must change nothing; num_free is {_num_free(a)}, expected 0"
    # the pages a refused free named are in use now: they must come back like any other
    _free(a, sorted(used + got), "every page, in use after the refused frees")


MORE_THAN_THE_POOL = (
    "more pages than the whole pool is a shortage like any other: raise OutOfPages for it too, the one exception "
    "the scheduler catches"
)


def _must_run_out(a, n: int, free: int, pool: str = "", hint: str = RAISE_OUT_OF_PAGES) -> None:
    try:
        got = a.allocate(n)
    except OutOfPages:
        pass
    except Exception as e:
        if hint == RAISE_OUT_OF_PAGES and n <= getattr(a, "num_pages", n - 1):
            raise _ran_dry(a, n, free, e) from e
        raise Mistake(f"allocate({n}) with {free} free{pool} raised {type(e).__name__}: raise OutOfPages", hint) from e
    else:
        raise not_raised(type(a), f"allocate({n}) with {free} free pages{pool}", got)
    left = _num_free(a)
    expect(
        left == free, f"a refused allocate({n}) must take nothing; num_free went from {free} to {left}", TAKE_NOTHING
    )


def case_exact_fit(cls):
    a = fresh(cls, 7)
    x = _allocate(a, 3)
    y = _allocate(a, 4)  # exactly num_free
    assert sorted(x + y) == list(range(7)), (
        f"allocate(3) then allocate(4) of 7 pages gave {x!r} and {y!r}: asking for exactly num_free pages "
        "must give every free page"
    )
    assert _num_free(a) == 0, f"all 7 pages are handed out, but num_free is {_num_free(a)}"
    try:
        z = a.allocate(0)
    except Exception as e:
        raise Mistake(
            f"allocate(0) with no page free raised {type(e).__name__}: it asks for nothing, so it gets [] even "
            "when the pool is full (the cache manager asks for 0 pages whenever the new tokens fit in a "
            "request's last page)",
            "refuse only when n > num_free: allocate(0) always fits",
        ) from e
    assert z == [], f"allocate(0) with no page free returned {z!r}: it asks for nothing, so it gets []"
    _must_run_out(a, 1, 0)
    _free(a, x, "the pages of the first allocate(3) while the second allocate(4) holds the rest")
    _must_run_out(a, 4, 3)
    again = _allocate(a, 3)
    assert sorted(again) == sorted(x), f"after free({x!r}) allocate(3) gave {again!r}: those 3 pages are the free ones"


def case_free_empty(cls):
    a = fresh(cls, 3)
    x = _allocate(a, 2)
    free_nothing(a, "with 2 of 3 pages in use", 1)
    a.free(x)
    free_nothing(a, "after every page came back", 3)


def case_refused_midway(cls):
    a = fresh(cls, 6)
    x = _allocate(a, 4)
    bad = [x[0], x[1], 6, x[2]]  # page 6 does not exist: refused in the middle of the list
    _must_refuse(a, bad, f"free({bad!r}), with page 6 of an allocator of 6 pages,")
    # The pages before the bad one may have been freed or not; each must be either free or still in use.
    refused_again = []  # the pages whose own free was refused: the bad call had given them back
    for p in x:
        try:
            a.free([p])
        except ValueError:
            refused_again.append(p)  # already freed by the refused call: fine, as long as it is on the free list
    lost = 6 - _num_free(a)
    if lost < 0:
        _pages_free_twice(a, bad, x)
    if lost:
        seen = f"after the refused free({bad!r}) and freeing each of {x!r} again, {lost} page(s) are lost"
        mistake = by_position(cls, seen) or page_zero_refused(cls, seen)  # page 0 refused: in use, not lost
        if mistake is not None:
            raise mistake
        _pages_back_but_not_counted(a, bad, x, refused_again)
        _frees_only_whole(cls, bad, x)
        raise Mistake(
            f"after the refused free({bad!r}) and freeing each of {x!r} again, num_free is {_num_free(a)} of 6: "
            f"{lost} page(s) are lost, neither in use nor free. A refused free may give back the pages before the "
            "bad one or none of them, but every page must stay either in use or on the free list",
            LOST_ON_REFUSAL,
        )
    got = _allocate(a, 6)
    assert sorted(got) == list(range(6)), f"allocate(6) then gave {got!r}: every page once expected"


def case_any_order(cls):
    for order in ("newest first", "oldest first"):
        a = fresh(cls, 4)
        first, second = _allocate(a, 2), _allocate(a, 2)
        gone, kept = (second, first) if order == "newest first" else (first, second)
        _free(a, gone, f"the pages of the {'second' if order == 'newest first' else 'first'} of two allocate(2)")
        free = _num_free(a)
        mistake = not_back(cls, 4, f"after free({gone!r}) num_free is {free}, expected 2") if free < 2 else None
        if mistake is not None:
            raise mistake
        again = _allocate(a, 2)
        assert not set(again) & set(kept), (
            f"pages given back {order}: allocate(2) gave {again!r} while the other request still holds {kept!r}: "
            "a page in use is never handed out twice, whatever order the pages came back in"
        )
        assert sorted(again) == sorted(gone), f"allocate(2) gave {again!r}: only {sorted(gone)!r} were free"


def case_many_steps(cls):
    rng = random.Random(4)
    n = 13
    a = fresh(cls, n)
    held: list[list[int]] = []
    for step in range(400):
        free = n - sum(map(len, held))
        if held and rng.random() < 0.45:
            pages = held.pop(rng.randrange(len(held)))
            if len(pages) > 1 and rng.random() < 0.3:  # give back part, keep the rest (a truncated row)
                k = rng.randrange(1, len(pages))
                rng.shuffle(pages)
                held.append(pages[k:])
                pages = pages[:k]
            _free(a, pages, f"pages an earlier allocate handed out (step {step})")
        elif rng.random() < 0.1:
            _must_run_out(a, free + 1 + rng.randrange(3), free)
        else:
            k = rng.randrange(0, min(free, 5) + 1)
            got = _allocate(a, k)
            mine = {p for h in held for p in h}
            twice = sorted(set(got) & mine)
            assert not twice, (
                f"step {step}: allocate({k}) gave {got!r}, and {twice!r} are still held (after a mix of "
                f"{step} allocations and frees in random order): a page is handed out twice"
            )
            assert all(0 <= p < n for p in got) and len(set(got)) == k, f"step {step}: allocate({k}) gave {got!r}"
            held.append(got)
        want, free = n - sum(map(len, held)), _num_free(a)
        mistake = not_back(cls, n, f"step {step}: num_free is {free}, expected {want}") if free < want else None
        if mistake is not None:
            raise mistake
        assert free == want, f"step {step}: num_free is {free}, expected {want}"
    for pages in held:
        _free(a, pages, "pages still held after 400 steps")
    assert sorted(_allocate(a, n)) == list(range(n)), "after everything came back, allocate(13) must give 0..12"


def case_independent(cls):
    a, b = fresh(cls, 4), fresh(cls, 4)
    x = _allocate(a, 2)
    assert b.num_free == 4, (
        f"allocating from one allocator changed another's num_free to {b.num_free!r}: state "
        "kept on the class (e.g. `in_use = set()` in the class body) or in a default argument "
        "(`def __init__(self, num_pages, in_use=set())`) is shared by every object"
    )
    y = _allocate(b, 2)
    b.free(y)
    _free(a, x, "the first allocator's pages")  # these pages are a's
    assert _num_free(a) == 4 and _num_free(b) == 4, "two allocators must not share their pages"


ENGINE_PARAMS = [SamplingParams(max_tokens=8, ignore_eos=True)] * 3


def case_real_engine(cls):
    fresh(cls, 4)  # an unfinished class fails here, before the engine runs
    try:
        got = run_requests(
            ENGINE_PARAMS, cache="naive", setup=lambda s: setattr(s.cache, "allocator", cls(s.cache.num_pages))
        )
    except ValueError as e:  # the answer's own free() refused the pages of a request that ended
        mistake = refused_in_use(cls, "the pages of a request that ended in the engine", e)
        if mistake is None:
            raise
        raise mistake from e
    ref = reference_run("allocator", ENGINE_PARAMS, cache="naive")
    for uid in ref.tokens:
        assert got.tokens.get(uid) == ref.tokens[uid], (
            f"request {uid}: the engine produced different tokens with your allocator (two requests wrote the same page?)"
        )
    missing = got.scheduler.cache.num_pages - _num_free(got.scheduler.cache.allocator)
    assert missing == 0, f"{missing} page(s) are missing after all requests ended"


CASES = [
    Case("allocate distinct pages", case_allocate_distinct, "keep a list of free page ids and pop from it"),
    Case("allocate(0) takes nothing", case_allocate_zero, "mind slices like free[-n:] when n is 0"),
    Case("free and reuse", case_free_and_reuse, "free() puts pages back on the free list"),
    Case("out of pages", case_out_of_pages, "check n against the free count before taking anything"),
    Case("double free", case_double_free, "remember which pages are in use"),
    Case("the same page twice in one free()", case_duplicate_in_one_call, "check each page as you free it"),
    Case("free of a page never handed out", case_free_never_allocated, "only a page in use may be freed"),
    Case("exact fit, then nothing left", case_exact_fit, "allocate(num_free) gets every free page; then only 0 fits"),
    Case("free([]) gives back nothing", case_free_empty, "an empty list is a valid free() that changes nothing"),
    Case("a refused free() loses no page", case_refused_midway, "every page is either in use or on the free list"),
    Case("pages given back in any order", case_any_order, "requests finish in any order, not first in, first out"),
    Case("many steps in random order", case_many_steps, "the invariants hold after every step, not only the first"),
    Case("two allocators are independent", case_independent, "state on self, set in __init__"),
    Case("in the real engine", case_real_engine, "three requests with your allocator in scheduler.cache", engine=True),
    allocator_case(reference),
]
SYMBOL = "PageAllocator"
SOLUTION = reference
