"""Exercise 4 — what a refused call must leave as it was: the count of free pages after a refused
`allocate`, and the record of a page after a refused `free`.

Where this sits: the base part's cases (base.py, frees.py) and the generated scenes (scenes.py) see
the symptom, a negative `num_free` or a page in use that `free` refuses. The probes here run the
answer once more on fresh allocators of 2 pages, to name the mistake only when the answer really
changed its state in the call it refused: a count taken down before the check, and never put back.
It also names the one refusal that fails before any state changes: an id past the end, num_pages,
read from the answer's table before it is checked, so that free() raises IndexError, not ValueError.
And the refusal that is right in all but its exception: free() turns the bad calls down, changing
nothing, but with another error than ValueError (KeyError from set.remove, AssertionError from assert).
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.kvcache.allocator import OutOfPages

COUNT_AFTER_REFUSAL = (
    "a refused allocate leaves num_free as it was: check n against the free pages before you take n off the "
    "count (or take it off only once the pages are taken)"
)

PAST_THE_END = (
    "check both ends of a page id: an id past the end (p >= num_pages) raises ValueError too, before your "
    "code looks it up in its table; indexing a list of num_pages entries with it raises IndexError instead"
)


def past_the_end(cls) -> bool:
    """Does free([2]) on a fresh allocator of 2 pages raise IndexError? Then the id is looked up in a
    table of 2 entries before anything checks it against num_pages (a check of p < 0 only)."""
    try:
        cls(2).free([2])
    except IndexError:
        return True
    except Exception:
        return False
    return False


def _count_after_refusal(cls, n: int) -> Optional[int]:
    """num_free of a fresh allocator of 2 pages (it must read 2) after allocate(n), n > 2, raised
    OutOfPages; None when the answer does not get that far."""
    try:
        a = cls(2)
        if a.num_free != 2:
            return None
        a.allocate(n)
    except OutOfPages:
        return getattr(a, "num_free", None)
    except Exception:
        return None
    return None


def count_taken_first(cls, got: int) -> Optional[Mistake]:
    """The Mistake for a negative num_free (`got`), when fresh allocators of 2 pages show why: each refused
    allocate(n) lowers num_free by n (to 2 - 3 after allocate(3), 2 - 5 after allocate(5)), more pages than
    there were, so no page was taken, only the count; None when they do not."""
    if _count_after_refusal(cls, 3) != -1 or _count_after_refusal(cls, 5) != -3:
        return None
    return Mistake(
        f"num_free is {got}: a count of free pages is never negative. On a fresh allocator of 2 pages, "
        "allocate(3) raises OutOfPages, as it must, yet num_free then reads -1 (2 - 3), and after a refused "
        "allocate(5) it reads -3 (2 - 5): your allocate takes n off the count before the check that refuses "
        "it, and never puts it back, so num_free says fewer pages are free than the free list holds",
        COUNT_AFTER_REFUSAL,
    )


RECORD_AFTER_REFUSAL = (
    "a refused free() must leave each page's record as it was: test the page before you take its count down "
    "(or unmark it), so a page refused once can still be freed after it is handed out again"
)


def _frees_page_zero(a) -> Optional[bool]:
    """On allocator `a` (2 pages): allocate(2), which must hand out page 0, then free([0]). True if that free
    is accepted, False if refused with ValueError, None if anything else went wrong."""
    try:
        if 0 not in a.allocate(2):
            return None
        a.free([0])
    except ValueError:
        return False
    except Exception:
        return None
    return True


def refusal_marks(cls, what: str, e: ValueError) -> Optional[Mistake]:
    """The Mistake for freeing pages in use (`what` says which) that raised `e`, when fresh allocators of 2
    pages show why: page 0, handed out and freed, is accepted, but once a free([0]) of the free page 0 was
    refused, the same allocate and free is refused too. None when they do not show that."""
    if _frees_page_zero(cls(2)) is not True:
        return None
    try:
        b = cls(2)
        b.free([0])
    except ValueError:
        pass
    except Exception:
        return None
    else:
        return None  # accepted: another mistake, which other checks name
    if _frees_page_zero(b) is not False:
        return None
    return Mistake(
        f"freeing {what} raised ValueError ({e}), yet those pages are in use. On a fresh allocator of 2 pages, "
        "allocate(2) then free([0]) is accepted; but when a free([0]) came first and was refused (page 0 was "
        "free), as it must be, allocate(2) then hands page 0 out and free([0]) is refused: the refused call "
        "changed page 0's record (a count taken down before the check, and not put back), so the page can "
        "never be freed again",
        RECORD_AFTER_REFUSAL,
    )


def other_refusal(cls, repeats: bool = False) -> Optional[str]:
    """The name of the exception free() refuses bad calls with, when it is not ValueError but the checks
    are right: on a fresh allocator of 4 pages with 2 handed out, free([a free page]) and free([a free page,
    a page in use]) (and with `repeats`, free([a page in use, the same page]): the stretch refuses a whole
    call) each raise that same exception, num_free stays 2, and freeing the 2 pages then brings it to 4.
    None when the answer does anything else."""
    try:
        a = cls(4)
        held = list(a.allocate(2))
        spare = next(p for p in range(4) if p not in held)
    except Exception:
        return None
    names = set()
    for bad in [[spare], [spare, held[0]]] + ([[held[0], held[0]]] if repeats else []):
        try:
            a.free(bad)
        except ValueError:
            return None
        except Exception as e:
            names.add(type(e).__name__)
        else:
            return None
    try:
        if len(names) != 1 or a.num_free != 2:
            return None
        a.free(held)
        return names.pop() if a.num_free == 4 else None
    except Exception:
        return None


def other_error(name: str) -> str:
    """The hint for a free() whose checks are right but raise `name` (other_refusal), not ValueError."""
    return (
        f"a bad free raises ValueError: your free() refuses the right calls, but with {name}, which the caller's "
        "`except ValueError` does not catch. Test each page yourself (p in ...) and raise ValueError"
    )


def other_why(name: str, repeats: bool = False) -> str:
    """What other_refusal saw, to end a message that says which bad free raised `name`."""
    calls = "a free page and a free page with a page in use"
    if repeats:
        calls = "a free page, a free page with a page in use and a page in use listed twice"
    return (
        f". On a fresh allocator of 4 pages with 2 handed out, your free() refuses {calls}, each with {name} "
        "and changing nothing: the checks are right, the exception is not"
    )


def refused_with(cls, where: str, how: str, repeats: bool = False) -> None:
    """Raise the Mistake for the bad free of `where` that `how` says raised (scenes.play's outcome, "raised
    KeyError: ..."), when other_refusal confirms that the answer refuses bad calls with that exception."""
    if not how.startswith("raised "):
        return
    name = other_refusal(cls, repeats)
    if name is not None and how.startswith(f"raised {name}:"):
        msg = f"{where}: a bad free {how}; it must raise ValueError" + other_why(name, repeats)
        raise Mistake(msg, other_error(name))
