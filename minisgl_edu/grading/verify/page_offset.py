"""Exercise 8: the pages to keep rounded up with a fixed offset, `(total + 3) // page_size`.

The `(a + b - 1) // b` idiom with b - 1 written as the number of the notebook's example (pages of 4):
right for pages of 4 positions, and only for them. With bigger pages it rounds down whenever more
than 3 positions spill onto the last page (that page, which holds the newest token's K/V, is given
back); with smaller ones it keeps pages past the request's new length. The page count looks right
on every step with pages of 4, so the mistake shows only at another page size: the unit case "the
newest token's page stays" (base.py) plays a step at pages of 8. `offset_hint` names it when the
answer's pages on the failing step are those of a fixed offset and, on one step of 17 tokens played
at pages of 1, 2, 4, 8 and 16 positions, the answer keeps (17 + c) // page_size pages each time.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

OFFSET = (
    "the pages to keep were rounded up with a fixed offset, (total + {c}) // page_size: an offset of {c} rounds "
    "up only for pages of {p} positions, where it is page_size - 1. On a step of {n} tokens yours keeps {got}, "
    "where {need} are due; here, with pages of {ps}, it {what}. Round up with the page size itself: "
    "pages_for(total, page_size), that is -(-total // page_size) or (total + page_size - 1) // page_size"
)
SIZES = (1, 2, 4, 8, 16)  # the page sizes of the probe; the engine's may be any of them
TOTAL = 17  # the probe's tokens after its step: 17 is no multiple of any page size but 1
MORE = 16  # pages past the probe's reserved row, so a count up to 15 pages too big still shows


def _kept(fn, page_size: int) -> Optional[int]:
    """How many pages the answer keeps on the probe step (prompt 11, output ' one', 4 drafts all
    accepted: 17 tokens) with pages of `page_size`, its row longer by MORE pages; None when it raises
    or its free_pages are not the end of the row."""
    one, two, three, four, five, six = _w(" one", " two", " three", " four", " five", " six")
    req = _req([one], 4, prompt_len=11, page_size=page_size)
    req.pages += [200 + i for i in range(MORE)]  # ids above every id _req gives (those are below 101)
    drafts = [two, three, four, five]
    try:
        got = _call(fn, req, drafts, drafts + [six])
    except Exception:
        return None
    free = got.free_pages
    if len(free) > len(req.pages) or free != req.pages[len(req.pages) - len(free) :]:
        return None
    return len(req.pages) - len(free)


def fixed_offset(fn) -> Optional[tuple[int, dict[int, int]]]:
    """(c, the pages kept at each page size) when the answer keeps (TOTAL + c) // page_size pages at every
    size of SIZES, with c from 1 to 15 and the count wrong at one size at least; None otherwise (c = 0,
    rounding down, is a mistake of its own, named by mistakes.py)."""
    kept = {ps: _kept(fn, ps) for ps in SIZES}
    if None in kept.values():
        return None
    c = kept[1] - TOTAL
    if not 1 <= c <= MORE - 1 or any(k != (TOTAL + c) // ps for ps, k in kept.items()):
        return None
    if all(k == pages_for(TOTAL, ps) for ps, k in kept.items()):
        return None
    return c, kept


def offset_hint(fn, req: VerifyRequest, want: VerifyResult, got: list[int]) -> Optional[str]:
    """OFFSET, filled in, when `got` (the answer's free_pages on this step) are those of (total + c) //
    page_size pages kept (the prefix cache's pages still kept) and the probe shows the same c; else None."""
    if fn is None or got == want.free_pages:
        return None
    found = fixed_offset(fn)
    if found is None:
        return None
    c, kept = found
    ps, total = req.page_size, want.kv_len + 1
    keep = max((total + c) // ps, req.prefix_len // ps)
    if got != req.pages[keep:]:
        return None
    # the probe's count at this step's page size when wrong there, else at the first size where it is
    wrong = next(s for s in (ps, *SIZES) if s in kept and kept[s] != pages_for(TOTAL, s))
    what = (
        "rounds down, and gives back a page that still holds valid positions (the newest token's among them)"
        if keep < pages_for(total, ps)
        else "keeps pages past the request's new length, which hold only rejected drafts"
    )
    return OFFSET.format(
        c=c,
        p=c + 1,
        n=TOTAL,
        got=(f"{kept[c + 1]} pages of {c + 1} (right) but " if c + 1 in kept else "")
        + f"{kept[wrong]} pages of {wrong}",
        need=pages_for(TOTAL, wrong),
        ps=ps,
        what=what,
    )
