"""Exercise 4 — what `free(pages)` must accept and refuse, and what a refused call may leave.

The base part's cases (base.py) hand `free` pages in use, which it must take back, and ids the
contract refuses (a page already free, the same page twice in one call, -1, `num_pages`), which
must raise ValueError and change nothing. When a check fails, the helpers here run the answer
once more on fresh allocators to name the mistake its result shows: pages in use kept where every
allocator sees them, each allocate() forgetting the pages of the ones before it, allocate() marking
other pages in use than it returns, free() taking back only whole allocations, a refused call that
lost pages or counted them wrong.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.by_position import by_position
from minisgl_edu.grading.allocator.checked_copy import checked_a_copy
from minisgl_edu.grading.allocator.falsy_record import first_allocation_refused
from minisgl_edu.grading.allocator.one_call import one_call_twice
from minisgl_edu.grading.allocator.page_zero import page_zero_refused
from minisgl_edu.grading.allocator.refusals import PAST_THE_END, past_the_end, refusal_marks
from minisgl_edu.grading.allocator.scenes import _num_free
from minisgl_edu.grading.allocator.skips import SKIPS_NOT_IN_USE, skips
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.feedback import crash_cause

FORGETS_EARLIER = (
    "the pages in use are every page handed out and not yet freed: add each allocate()'s pages to them "
    "(self.in_use.update(pages)), never replace them with the latest call's (self.in_use = set(pages) forgets "
    "the pages of every earlier allocate())"
)
FREE_NOTHING = (
    "free([]) gives back no pages: an empty list is a valid free() that changes nothing, so it returns "
    "without raising and leaves every page where it was"
)


def free_nothing(a, when: str, want: int) -> None:
    """free([]) on allocator `a` (`when` says its state) must return and leave num_free at `want`: the
    cache manager frees an empty list whenever a request has no page of its own to give back. Shared by
    the base and contiguous parts, so either names the call it refused."""
    try:
        a.free([])
    except Exception as e:
        cause = crash_cause(e)
        raise Mistake(
            f"free([]) {when} raised {type(e).__name__}: {e}. Giving back no pages is not an error (the cache "
            "manager does it whenever a request has no page of its own to return); it changes nothing",
            FREE_NOTHING + (f". Your code: {cause}" if cause else ""),
        ) from e
    got = _num_free(a)
    if got != want:
        raise Mistake(f"free([]) {when} changed num_free to {got}, expected {want}", FREE_NOTHING)


def _accepts(cls, sizes: list[int], give_back) -> Optional[bool]:
    """On a fresh allocator of 4 pages, allocate(k) for each k of `sizes`, then free(give_back(groups)):
    True if accepted, False if refused with ValueError, None if anything else went wrong."""
    try:
        a = cls(4)
        groups = [a.allocate(k) for k in sizes]
        a.free(give_back(groups))
    except ValueError:
        return False
    except Exception:
        return None
    return True


def _forgets_earlier_allocations(cls) -> bool:
    """On fresh allocators of 4 pages: after allocate(1) twice, free() of the first allocation is refused
    with ValueError, yet free() of the second (the latest) is accepted, as is free() of a lone allocation."""
    return (
        _accepts(cls, [1, 1], lambda g: g[0]) is False
        and _accepts(cls, [1, 1], lambda g: g[1]) is True
        and _accepts(cls, [1], lambda g: g[0]) is True
    )


def forgetting(cls, what: str, e: ValueError) -> Optional[Mistake]:
    """The Mistake for freeing pages in use (`what` says which) that raised `e`, when fresh
    allocators show that each allocate() forgets the pages of the ones before it; None otherwise."""
    if not _forgets_earlier_allocations(cls):
        return None
    return Mistake(
        f"freeing {what} raised ValueError ({e}), yet those pages are in use: an allocate() "
        "handed them out and no free() gave them back. On a fresh allocator of 4 pages, after allocate(1) "
        "twice, free() of the second allocation is accepted but free() of the first is refused: each "
        "allocate() forgets the pages handed out by the ones before it, so only the latest allocation "
        "counts as in use",
        FORGETS_EARLIER,
    )


ANY_GROUPING = (
    "free() takes back any pages in use, in any grouping: part of one allocation (a request whose row got "
    "shorter), or pages of several allocations in one call; check each page against the pages in use, not "
    "against the groups allocate() handed out"
)


def _whole_allocations_only(cls) -> Optional[str]:
    """What fresh allocators of 4 pages refuse although free() of a whole allocation is accepted: part of
    an allocate(2), or the pages of two allocate(1) in one call; None when they refuse neither."""
    if not _accepts(cls, [2], lambda g: g[0]):
        return None
    refused = []
    if _accepts(cls, [2], lambda g: g[0][:1]) is False:
        refused.append("free() of one of the two pages of an allocate(2)")
    if _accepts(cls, [1, 1], lambda g: g[0] + g[1]) is False and _accepts(cls, [1, 1], lambda g: g[1]):
        refused.append("free() of the pages of two allocate(1) in one call")
    if not refused:
        return None
    return " and ".join(refused) + (" are" if len(refused) > 1 else " is")


MARK_RETURNED = (
    "allocate() must mark as in use exactly the pages it returns: take them off the free list first "
    "(pages = ...), then mark those same pages (self.in_use.update(pages)), not pages read again from the "
    "list or set after it changed"
)


def _marked_instead(cls, k: int) -> Optional[tuple[list[int], list[int]]]:
    """On fresh allocators of 4 pages after one allocate(k): when free() of the pages it returned is refused
    with ValueError, yet free() accepts exactly k other pages one at a time, those are the pages allocate()
    marked in use instead: (pages returned, pages marked). None when the answer does not show that."""
    try:
        a = cls(4)
        returned = list(a.allocate(k))
    except Exception:
        return None
    if _accepts(cls, [k], lambda g: g[0]) is not False:
        return None
    marked = [p for p in range(4) if p not in returned and _accepts(cls, [k], lambda g, p=p: [p])]
    if len(marked) != k:
        return None
    return returned, marked


def marked_other_pages(cls, what: str, e: ValueError) -> Optional[Mistake]:
    """The Mistake for freeing pages in use (`what` says which) that raised `e`, when fresh allocators show
    that allocate() marks other pages in use than the ones it hands out; None otherwise."""
    for k in (1, 2):
        found = _marked_instead(cls, k)
        if found is not None:
            returned, marked = found
            return Mistake(
                f"freeing {what} raised ValueError ({e}), yet those pages are in use: an allocate() handed them "
                f"out and no free() gave them back. On a fresh allocator of 4 pages, allocate({k}) returned "
                f"{returned!r}, but then free({returned!r}) is refused while free() of {marked!r}, pages it did "
                f"not hand out, is accepted: the pages allocate() marks in use are not the pages it returns",
                MARK_RETURNED,
            )
    return None


def refused_in_use(cls, what: str, e: ValueError) -> Optional[Mistake]:
    """The Mistake for freeing pages in use (`what` says which) that raised `e`, when fresh allocators
    show why: one allocate() returns a page several times (one_call.py), or free() deletes by position in
    its list (`del in_use[p]`), or each allocate() forgets the pages of the ones before it, or a refused
    free() left its page's record changed, or the first
    allocation's record, 0, reads as none, or the range check refuses page 0, or free() takes back only
    whole allocations as allocate() handed them out, or allocate() marks other pages than it returns;
    None otherwise."""
    seen = f"freeing {what} raised ValueError ({e}), yet those pages are in use"
    mistake = one_call_twice(cls, seen) or by_position(cls, seen) or forgetting(cls, what, e)
    mistake = mistake or refusal_marks(cls, what, e)
    mistake = mistake or first_allocation_refused(cls, what, e) or page_zero_refused(cls, seen)
    if mistake is not None:
        return mistake
    refused = _whole_allocations_only(cls)
    if refused is None:
        return marked_other_pages(cls, what, e)
    return Mistake(
        f"freeing {what} raised ValueError ({e}), yet those pages are in use: an allocate() handed them out "
        f"and no free() gave them back. On a fresh allocator of 4 pages, free() of a whole allocate(2) is "
        f"accepted, but {refused} refused: your free() takes back only whole allocations, as allocate() "
        "handed them out, while any pages in use may come back, in any grouping",
        ANY_GROUPING,
    )


def _frees_only_whole(cls, bad: list[int], x: list[int]) -> None:
    """Pages seem lost after a refused free and each page of `x` freed alone: when fresh allocators show that
    free() takes back only whole allocations, the frees of single pages were refused, not the pages lost."""
    refused = _whole_allocations_only(cls)
    if refused is not None:
        raise Mistake(
            f"after the refused free({bad!r}), freeing each page of {x!r} (one allocate({len(x)})) on its own was "
            f"refused. On a fresh allocator of 4 pages, free() of a whole allocate(2) is accepted, but {refused} "
            "refused: your free() takes back only whole allocations, as allocate() handed them out, while any "
            "pages in use may come back, in any grouping",
            ANY_GROUPING,
        )


KEEP_THE_LIST = (
    "free(pages) must leave the caller's list as it was: iterate it, do not pop from or sort it (the list "
    "belongs to the caller, who may read it again)"
)


def _how_changed(before: list, after: object) -> str:
    """Says in words how the list `before` became `after`: emptied, sorted, reordered, shortened, grown."""
    if not isinstance(after, list):
        return f"it is now {after!r}"
    if not after:
        return "it was emptied"
    if len(after) < len(before):
        return f"it lost {len(before) - len(after)} of its {len(before)} ids"
    if len(after) > len(before):
        return f"{len(after) - len(before)} id(s) were added to it"
    if sorted(after) == sorted(before):
        return "it was sorted" if after == sorted(before) else "its ids were reordered"
    return "its ids were replaced"


def kept_list(pages: list, before: list, call: str) -> None:
    """After `call` returned, the list it was given must still read `before`: free() takes the pages, not
    the caller's list. Names the change (emptied, sorted, ...) when it does not."""
    if pages != before:
        raise Mistake(
            f"{call} changed the list it was given: it held {before!r}, and after the call it holds {pages!r} "
            f"({_how_changed(before, pages)}). The list belongs to the caller, who may read it again after free() "
            "returns, so free() must only read it",
            KEEP_THE_LIST,
        )


def _free(a, pages: list[int], what: str) -> None:
    """a.free(pages), pages in use that the contract says it must take back (`what` says which). A
    ValueError it raises is its own check refusing them; `refused_in_use` says when fresh allocators
    show why. The caller's list must read the same after the call (`kept_list`)."""
    before = list(pages)
    try:
        a.free(pages)
    except ValueError as e:
        mistake = refused_in_use(type(a), f"{what}, free({before!r}),", e)
        if mistake is None:
            raise
        raise mistake from e
    kept_list(pages, before, f"free({before!r}) of {what}")
    mistake = adopted(a, pages, f"free({before!r}) of {what}")
    if mistake is not None:
        raise mistake


ADOPTED = (
    "free() never keeps the caller's list object as its own free list: copy the ids onto a list of its own "
    "(append each page, extend, or list(pages)), because the list still belongs to the caller, who may clear "
    "or reuse it after free() returns"
)


def _caller_clears(cls) -> Optional[int]:
    """On a fresh allocator of 3 pages: allocate(3), free(pages), then the caller clears its list `pages`.
    num_free after that when it is no longer 3 (the allocator's free pages went with the caller's list),
    else None (also when anything raised)."""
    try:
        a = cls(3)
        pages = a.allocate(3)
        a.free(pages)
        if a.num_free != 3:
            return None
        pages.clear()
        left = a.num_free
    except Exception:
        return None
    return left if isinstance(left, int) and left != 3 else None


def adopted(a, pages: list, call: str) -> Optional[Mistake]:
    """After `call` returned: when an attribute of `a` is the very list free() was given (the same object,
    not an equal one), and a fresh allocator loses its free pages once the caller clears its list, the
    Mistake that says free() took the caller's list as its free list; None otherwise."""
    own = next((name for name, value in getattr(a, "__dict__", {}).items() if value is pages), None)
    if own is None:
        return None
    left = _caller_clears(type(a))
    if left is None:
        return None
    return Mistake(
        f"after {call}, self.{own} is the very list the caller passed to free(), not a copy of its ids. On a "
        f"fresh allocator of 3 pages, after allocate(3) and free(pages), the caller clearing its own list "
        f"`pages` changed num_free from 3 to {left}: your allocator's free pages live in the caller's list",
        ADOPTED,
    )


NOT_IN_USE = "only a page in use may be freed: remember the pages in use and refuse every other id"
REPEATED = (
    "a page listed twice in the same call raises ValueError: it is in use only once, yet each copy passes a "
    "check against the pages in use made before any is freed; refuse a repeat within the list"
)


SHARED_STATE = "every allocator has its own pages in use: create their set in __init__ (self.in_use = set()), {where}"
SHARED_DEFAULT = "not as a default argument: in_use=set() in the def line is built once and shared by every call"
SHARED_ELSEWHERE = "not in the class body or at module level, where every allocator sees the same one"


def _shared_where(cls) -> str:
    """Which of SHARED_DEFAULT and SHARED_ELSEWHERE fits: a list, set or dict among __init__'s defaults."""
    init = getattr(cls, "__init__", None)
    defaults = list(getattr(init, "__defaults__", None) or ()) + list(
        (getattr(init, "__kwdefaults__", None) or {}).values()
    )
    return SHARED_DEFAULT if any(isinstance(d, (list, set, dict)) for d in defaults) else SHARED_ELSEWHERE


def _shared_between_allocators(cls) -> bool:
    """Whether a fresh allocator refuses free([0]) while no other allocator holds page 0, yet accepts it
    while another one does: then the pages in use live where every allocator sees them (a mutable
    default argument of __init__, the class body, a module global)."""
    try:
        first = cls(4)
        first.free(first.allocate(4))  # pages 0..3 out of use, in a shared set too
        try:
            cls(4).free([0])
        except ValueError:
            pass
        else:
            return False  # accepted with no other allocator around: not sharing, another mistake
        holder = cls(4)
        holder.allocate(4)
        cls(4).free([0])
    except Exception:
        return False
    return True


def _must_refuse(a, pages: list[int], why: str, hint: str = NOT_IN_USE) -> None:
    try:
        a.free(pages)
    except ValueError:
        return
    except Exception as e:
        if isinstance(e, IndexError) and past_the_end(type(a)):  # free([2]) of 2 pages raised it too
            raise Mistake(
                f"free({pages!r}) raised IndexError; {why} must raise ValueError. A fresh allocator of 2 pages "
                "raises IndexError for free([2]) too: page 2 is past the end, and your code reads its table "
                "with it before checking it",
                PAST_THE_END,
            ) from e
        seen = f"free({pages!r}) raised {type(e).__name__}; {why} must raise ValueError"
        raise checked_a_copy(type(a), pages, seen, e) or Mistake(seen, "raise ValueError") from e
    if _shared_between_allocators(type(a)):
        raise Mistake(
            f"free({pages!r}) was accepted: {why} must raise ValueError. Your allocators share their pages in "
            "use: a fresh allocator of 4 pages refuses free([0]) while no other allocator holds page 0, and "
            "accepts it while another allocator holds it, so this one accepted pages that an earlier "
            "allocator had handed out",
            SHARED_STATE.format(where=_shared_where(type(a))),
        )
    if skips(type(a), pages, getattr(a, "num_pages", None)):
        # before the case's own hint: that one states the rule the skip already half keeps
        raise Mistake(
            f"free({pages!r}) was accepted: {why} must raise ValueError. On a fresh allocator of 4 pages your free() "
            "skips an id like it and frees the other pages of the same call: it passes over the ids it should refuse",
            SKIPS_NOT_IN_USE,
        )
    raise Mistake(f"free({pages!r}) was accepted: {why} must raise ValueError (or that page is handed out twice)", hint)


COUNT_ONLY_WHAT_WENT_BACK = (
    "count a page as free only once it is back on the free list: a refused free() counts none it did not give back"
)


def _more_free_than_pages(a, when: str, free: int, num_pages: int) -> None:
    """num_free is above num_pages: allocate(num_free) tells a page on the free list twice (handed out
    twice) from a count that is too high (the free list runs out first)."""
    try:
        got = a.allocate(free)
    except Exception as e:
        raise Mistake(
            f"{when} num_free is {free} of {num_pages} pages, yet allocate({free}) then raised {type(e).__name__}: "
            f"num_free counts {free - num_pages} page(s) that were never given back",
            COUNT_ONLY_WHAT_WENT_BACK,
        ) from None
    twice = sorted({q for q in got if got.count(q) > 1}) if isinstance(got, list) else []
    if twice:
        raise Mistake(
            f"{when} num_free is {free} of {num_pages} pages, and allocate({free}) gave {got!r}, page {twice[0]} "
            f"twice: the refused call put page {twice[0]} on the free list while it was already free, so it is on "
            "the free list twice",
            REFUSED_PAGE_WENT_BACK,
        )
    raise AssertionError(f"{when} num_free is {free} of {num_pages} pages, and allocate({free}) gave {got!r}")


# Only refused calls ran, yet a page is on the free list twice: the page the call was refused for
# (a repeat, or a page that was not in use) went onto the free list before the test that refuses it.
REFUSED_PAGE_WENT_BACK = (
    "a refused free() put the page it refused on the free list: test each page (in use, not a repeat) before it "
    "goes on the free list, so a page that is not in use never goes back"
)


NEGATIVE_ID = (
    "-1 is no page id, whichever pages are in use: a list or array indexed with -1 reads the last page's entry, "
    "so test 0 <= p < num_pages before looking p up"
)


COUNT_EACH_PAGE = (
    "num_free counts every page on the free list: add one as each page goes back (or use the free list's "
    "length), not len(pages) once after the loop, which a refused free() never reaches"
)


def _pages_back_but_not_counted(a, bad: list[int], x: list[int], refused_again: list[int]) -> None:
    """num_free is short after a refused free: if the pages it reports free include one that the refused
    call put back, that page is free, not lost, and the count is what is wrong. Only a page whose second
    free (`refused_again`: the pages of `x` whose own free() was refused after the bad call) was refused
    counts as put back by the bad call: a page freed again without complaint went back in that free."""
    free = getattr(a, "num_free", None)  # read as it is: _num_free's checks are the cases' own
    try:
        got = a.allocate(free)
    except Exception:
        return  # the case's own message says it
    if not isinstance(got, list) or len(set(got)) != len(got):
        return  # a page handed out twice: the free list is wrong, not only the count
    back = sorted(set(got) & set(x[:2]) & set(refused_again))
    if back:
        raise Mistake(
            f"after the refused free({bad!r}) and freeing each of {x!r} again, num_free is {free} of 6, and "
            f"allocate({free}) then handed out {got!r}, page {back[0]} among them: the refused call had put "
            f"page {back[0]} back on the free list, as it may, but num_free never counted it, so it reports "
            f"{6 - free} page(s) fewer than are free",
            COUNT_EACH_PAGE,
        )


# Pages neither in use nor free after a refused call: it took them out of use and raised before
# putting them on the free list (a loop that unmarks, then one append after it).
LOST_ON_REFUSAL = (
    "your refused free() took pages out of use and raised before putting them on the free list: check every "
    "page of the call before changing anything, or give back each page in the same step that unmarks it"
)
FREE_TWICE = (
    "a refused free() leaves every page either in use or on the free list, never both: if you undo the pages it "
    "already gave back, take them off the free list too (or check every page before freeing any)"
)


def _pages_free_twice(a, bad: list[int], x: list[int]) -> None:
    """num_free is above num_pages after a refused free. When allocate(num_free) then hands a page out twice,
    pages the refused call gave back stayed on the free list although it marked them in use again, and their
    owner's free() listed them a second time; otherwise num_free counts pages that are not there."""
    free = getattr(a, "num_free", None)  # read as it is: _num_free's checks are the cases' own
    try:
        got = a.allocate(free)
    except Exception:
        got = None
    twice = sorted({p for p in got if got.count(p) > 1}) if isinstance(got, list) else []
    where = f"after the refused free({bad!r}) and freeing each of {x!r} again, num_free is {free} of 6"
    if not twice:
        raise Mistake(f"{where}: it counts {free - 6} page(s) more than the allocator has", COUNT_ONLY_WHAT_WENT_BACK)
    raise Mistake(
        f"{where}: allocate({free}) then handed out {got!r}, page {twice[0]} twice. The refused call left pages it "
        "had already given back on the free list while they were still in use (their owner's later free() was "
        "accepted and listed them a second time): a page is either in use or free",
        FREE_TWICE,
    )


def _lost_on_free(cls, num_pages: int) -> Optional[list[int]]:
    """On a fresh allocator of `num_pages`: allocate(num_pages), then free([p]) of each page alone, lowest
    id first. The pages whose accepted free left num_free where it was, when allocate(num_free) then hands
    out exactly every other page: those pages were freed but never went back on the free list. None when
    no page is lost that way, or when anything else goes wrong (other checks name that)."""
    try:
        a = cls(num_pages)
        pages = a.allocate(num_pages)
        if not isinstance(pages, list) or sorted(pages) != list(range(num_pages)):
            return None
        lost = []
        for p in range(num_pages):
            before = a.num_free
            a.free([p])
            after = a.num_free
            if not (isinstance(before, int) and isinstance(after, int)) or after not in (before, before + 1):
                return None
            if after == before:
                lost.append(p)
        got = a.allocate(a.num_free)
    except Exception:
        return None
    back = [p for p in range(num_pages) if p not in lost]
    if not lost or not isinstance(got, list) or sorted(got) != back:
        return None
    return lost


def not_back(cls, num_pages: int, what: str) -> Optional[Mistake]:
    """The Mistake for num_free short after accepted frees (`what` says where), when a fresh allocator of
    `num_pages` shows pages that free() accepts yet never puts back on the free list; None otherwise."""
    lost = _lost_on_free(cls, num_pages)
    if lost is None:
        return None
    zero = 0 in lost and len(lost) < num_pages
    ids = f"page{'s' if len(lost) > 1 else ''} {', '.join(map(str, lost))}"
    return Mistake(
        f"{what}. On a fresh allocator of {num_pages} pages, after allocate({num_pages}), free([p]) of each page "
        f"alone is accepted, but freeing {ids} left num_free where it was, and allocate(num_free) then handed out "
        f"every page but {'those' if len(lost) > 1 else 'that one'}: free() took {ids} out of use and never put "
        f"{'them' if len(lost) > 1 else 'it'} back on the free list, so {'they are' if len(lost) > 1 else 'it is'} "
        "lost for good",
        f"pages freed but not back on the free list: ids {lost}. "
        + (
            "Page 0 is a real page, the first of range(num_pages), not 'no page': a test such as `if not p` skips it. "
            if zero
            else ""
        )
        + "Every page free() accepts goes back on the free list",
    )
