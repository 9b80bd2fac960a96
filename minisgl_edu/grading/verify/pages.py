"""What a wrong `free_pages` shows: which pages were given back or kept and what positions they
hold (`pages_story`), the known page mistake whose pages match (`page_mistake`, with `confirmed` and
`_pages_on_a_longer_row`, which try the answer once more where one step cannot tell two apart), and
the classes of mistakes that a probe of the answer tells (`page_class`): pages kept only on a step
that finishes the request, every page of its own given back on such a step, prefix_len (tokens)
compared with a count of pages, the prefix cache's pages added to the pages kept, and the positions
in the row of the pages to give back returned instead of their ids.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.finish_frees import FINISH_FREED, frees_its_pages_on_a_finish
from minisgl_edu.grading.verify.mistakes import _PAGES, ALL_MISTAKES, PAGE_MISTAKES
from minisgl_edu.grading.verify.page_offset import offset_hint
from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.kvcache.manager import pages_for
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step


def _with_more_pages(req: VerifyRequest, more: int) -> VerifyRequest:
    """A copy of the request whose row has `more` pages past its end, ids above every page it holds."""
    longer = _copy(req)
    top = max(req.pages, default=0)
    longer.pages = list(req.pages) + [top + 1 + i for i in range(more)]
    return longer


def _frees_the_end_of_a_longer_row(fn, req, drafts, targets) -> bool:
    """The answer gives back the right pages of the same step with two more pages in its row."""
    longer = _with_more_pages(req, 2)
    try:
        got = _call(fn, longer, drafts, targets)
    except Exception:
        return False
    return got.free_pages == package_step(_copy(longer), list(drafts), list(targets)).free_pages


def confirmed(m: Optional[str], fn, req, drafts, targets, got: list[int]) -> Optional[str]:
    """The page mistake to name for these free_pages: the slice req.pages[-0:] where the answer gave back
    the whole row on a step that gives back nothing, yet the right pages where some do go (the same
    step with two more pages in its row); else `m`, the page mistake page_mistake found."""
    none_go = not package_step(_copy(req), list(drafts), list(targets)).free_pages
    if none_go and got and got == list(req.pages) and fn is not None:
        if _frees_the_end_of_a_longer_row(fn, req, drafts, targets):
            return "pages_minus_zero"
    return m


def page_mistake(req, drafts, targets, free_pages, mistakes=ALL_MISTAKES) -> Optional[str]:
    """The known mistake of PAGE_MISTAKES that gives these free_pages, when only one does (a step
    where two give the same pages does not tell them apart). The slice req.pages[-0:] is left to
    `confirmed`: it gives the right pages wherever some go, so only a probe of the answer names it."""
    alike = [
        m
        for m in PAGE_MISTAKES
        if m in mistakes and m != "pages_minus_zero" and _step(req, drafts, targets, m).free_pages == free_pages
    ]
    return alike[0] if len(alike) == 1 else None


def _pages_on_a_longer_row(fn, req, drafts, targets, mistakes) -> Optional[str]:
    """The page mistake the answer makes on the same step with two more pages in its row, where
    keeping every page and keeping one too many no longer give the same pages."""
    longer = _with_more_pages(req, 2)
    try:
        got = _call(fn, longer, drafts, targets)
    except Exception:
        return None  # its other mistake is named where it shows
    return page_mistake(longer, drafts, targets, got.free_pages, mistakes)


def pages_story(req: VerifyRequest, want: VerifyResult, got: list[int]) -> tuple[str, str]:
    """Which pages a wrong free_pages gave back or kept, and what positions they hold, and its hint."""
    ps, pages = req.page_size, req.pages
    total = want.kv_len + 1
    tail = pages[len(pages) - len(got) :] if got else []
    if got != tail:
        if sorted(got) == sorted(want.free_pages):
            return "Give them in the row's order: they are the end of req.pages", (
                "free_pages are the end of req.pages, in the row's order"
            )
        return (
            "free_pages must be the end of req.pages (the pages past the request's new length), in the row's order",
            _PAGES,
        )
    kept, need = len(pages) - len(got), pages_for(total, ps)
    if kept < need:
        page, lo, hi = pages[kept], kept * ps, (kept + 1) * ps - 1
        if kept < req.prefix_len // ps:
            what = f"page {page} belongs to the prefix cache (the first {req.prefix_len} positions)"
        elif lo == total - 1:
            what = (
                f"page {page} (positions {lo}..{hi}) is where the newest token's K/V goes next step, at position {lo}"
            )
        else:
            what = (
                f"page {page} (positions {lo}..{hi}) still holds positions {lo}..{total - 1} of the request's "
                f"{total} tokens (the newest's, {total - 1}, included)"
            )
        return (
            f"A page still needed was given back: {what}",
            f"{_PAGES}: the newest token's page and the prefix cache's pages included",
        )
    extra = pages[need:kept]
    if kept == len(pages):
        what = "no page was given back"
    else:
        what = f"page(s) {extra} were kept"
    return (
        f"{what[0].upper()}{what[1:]}, but the request's {total} tokens need only the first {need} pages of the row: "
        f"pages past position {total - 1} hold only rejected drafts or tokens after a finish, and go back now",
        _PAGES,
    )


# --- classes of mistakes that a probe of the answer tells ------------------------------------------

FINISH_KEPT = (
    "pages past the request's new length were kept when the step finished the request: a finish does not free them "
    "here, the step must hand them back in free_pages"
)
PREFIX_IN_TOKENS = (
    "prefix_len is in tokens, the page count in pages: compare pages with pages (pages_for(prefix_len, page_size))"
)
PREFIX_ADDED = (
    "the prefix cache's pages were added on top of the pages kept: they are the row's first prefix_len // "
    "page_size pages, already inside the pages_for(total, page_size) pages of positions 0..total-1, so adding "
    "them keeps as many pages of rejected drafts. Take the larger of the two counts (max), not their sum"
)


POSITIONS = (
    "free_pages are page ids, the entries req.pages[keep:], not their positions in the row "
    "(range(keep, len(req.pages))): the scheduler frees those ids, so positions would free other requests' pages"
)


def gives_positions(fn, req: VerifyRequest, drafts, targets, want: VerifyResult, got: list[int]) -> bool:
    """The answer's free_pages are the positions in the row of the pages to give back, not their ids: here
    range(keep, len(req.pages)) for the right keep, and the same positions again on the same step with
    every page id moved past the row's length (ids that differ from any position), where the ids change."""
    keep = len(req.pages) - len(want.free_pages)
    if fn is None or not want.free_pages or got != list(range(keep, len(req.pages))) or got == want.free_pages:
        return False
    moved = _copy(req)
    moved.pages = [len(req.pages) + max(req.pages, default=0) + 1 + p for p in req.pages]
    try:
        again = _call(fn, moved, drafts, targets)
    except Exception:
        return False
    return again.free_pages == got


def _kept(req: VerifyRequest, free_pages: list[int]) -> Optional[int]:
    """How many pages of the row the answer kept, when free_pages is the end of the row (else None)."""
    if len(free_pages) > len(req.pages) or free_pages != req.pages[len(req.pages) - len(free_pages) :]:
        return None
    return len(req.pages) - len(free_pages)


def _finish_probes():
    """Three steps of one row of 5 pages (prompt 10, output [' one'], 6 drafts), with pages past the new
    length: one no finish cuts (the first draft rejected), one cut by an EOS accepted as draft 1, one cut
    by max_new_tokens 3; in the last two the draft after the cut is rejected, so the run before the cut
    needs no more pages than the tokens kept."""
    two, three, four, five, six, seven = _w(" two", " three", " four", " five", " six", " seven")
    free = (_req(_w(" one"), 6), [two, three, four, five, six, seven], [seven, three, four, five, six, seven, two])
    eos = (_req(_w(" one"), 6), [two, 2, three, four, five, six], [two, 2, seven, four, five, six, two])
    length = (_req(_w(" one"), 6, max_new=3), [two, three, four, five, six, seven], [two, three, seven] + [two] * 4)
    return free, eos, length


def _probe(fn, req, drafts, targets) -> Optional[tuple[int, int]]:
    """(pages the answer kept, pages the package kept) on one step; None when the answer raised or its
    free_pages are not the end of the row."""
    try:
        got = _call(fn, req, drafts, targets)
    except Exception:
        return None
    want = package_step(_copy(req), list(drafts), list(targets))
    kept = _kept(req, got.free_pages)
    return None if kept is None else (kept, len(req.pages) - len(want.free_pages))


def keeps_pages_on_a_finish(fn) -> bool:
    """The answer gives back the right pages on a step that no finish cuts, and keeps pages past the new
    length on a step that a finish cuts (an EOS or max_new_tokens), where the run before the cut needs
    no more pages than the tokens kept."""
    free, *finishes = _finish_probes()
    right = _probe(fn, *free)
    if right is None or right[0] != right[1]:
        return False
    return any(p is not None and p[0] > p[1] for p in (_probe(fn, *f) for f in finishes))


def keeps_prefix_len_pages(fn, req, drafts, targets) -> bool:
    """On the same step with a row longer than prefix_len pages, the answer keeps exactly prefix_len pages,
    more than the step needs: prefix_len, a number of tokens, was taken as a number of pages."""
    need = pages_for(req.prompt_len + len(req.output_ids) + 1, req.page_size)  # at least the model's token
    if req.prefix_len <= need:
        return False
    longer = _with_more_pages(req, max(0, req.prefix_len + 2 - len(req.pages)))
    probe = _probe(fn, longer, drafts, targets)
    return probe is not None and probe[0] == req.prefix_len > probe[1]


def adds_the_prefix_pages(fn, req, drafts, targets) -> bool:
    """On the same step with a row long enough, the answer keeps prefix_len // page_size pages more than
    the step needs, and with no cached prefix (prefix_len 0) exactly the pages it needs: the prefix
    cache's pages were added to the pages of the request's positions, which already hold them."""
    extra = req.prefix_len // req.page_size
    if not extra:
        return False
    longer = _with_more_pages(req, extra + 2)
    probe = _probe(fn, longer, drafts, targets)
    if probe is None or probe[0] != probe[1] + extra:
        return False
    longer.prefix_len = 0  # the same step without a prefix: a count off for another reason stays off
    probe = _probe(fn, longer, drafts, targets)
    return probe is not None and probe[0] == probe[1]


def page_class(fn, req: VerifyRequest, drafts, targets, want: VerifyResult, got: list[int]) -> Optional[str]:
    """The class of page mistakes that the answer's kept pages show here, told by probes of the answer:
    positions in the row given instead of page ids, a rounding offset right for one page size only
    (page_offset.py), prefix_len compared with a count of pages, the prefix cache's pages added to the
    pages kept, pages kept only when the step finishes the request, or every page of its own given back
    when it does (finish_frees.py). None when the probes show none."""
    if gives_positions(fn, req, drafts, targets, want, got):
        return POSITIONS
    if offset := offset_hint(fn, req, want, got):  # right for one page size only: (total + 3) // page_size
        return offset
    kept = _kept(req, got)
    if fn is None or kept is None:
        return None
    if kept < len(req.pages) - len(want.free_pages):  # pages still needed given back
        return FINISH_FREED if want.finish_reason is not None and frees_its_pages_on_a_finish(fn) else None
    if kept == len(req.pages) - len(want.free_pages):
        return None
    if req.prefix_len and keeps_prefix_len_pages(fn, req, drafts, targets):
        return PREFIX_IN_TOKENS
    if adds_the_prefix_pages(fn, req, drafts, targets):
        return PREFIX_ADDED
    if want.finish_reason is not None and keeps_pages_on_a_finish(fn):
        return FINISH_KEPT
    return None
