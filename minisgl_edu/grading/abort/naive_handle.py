"""Exercise 2's probe for an abort that tells an admitted request by its cache handle.

Called by `checks.check_row` and `checks.check_release_asked` (the hand cases run under the naive
cache) and by the generated scenes' hints (`scenes.hints`). Under the naive cache
(`cache="naive"`) no prefix is ever matched or locked, so every request's `req.cache_handle` is
None, admitted or not. An answer that releases only `if req.cache_handle is not None` works under
the radix cache (an admitted request there always holds a handle, the root when nothing matched)
and gives back nothing under the naive cache: the row and every page stay in use. A row left in use
is what many other mistakes leave too, so the probe checks the cause itself: on schedulers of its
own it aborts one decoding request under each cache, and names this mistake only when the radix
cache got its row and pages back and the naive cache got nothing back.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from minisgl_edu.grading.abort.probes import probe_uid
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import decoding, modelless
from minisgl_edu.kvcache.naive_cache import NaiveCache

BY_THE_HANDLE = (
    "under the naive cache req.cache_handle is None for every request, admitted or not: the naive cache "
    "matches and locks no prefix. Whether a request holds a row and pages is req.table_idx >= 0, not its cache "
    "handle; release(req, cache_it=False) itself does nothing for a request without a row, so it can be called "
    "for every aborted request"
)


def _after_abort(fn, cache: str) -> str:
    """What `fn` gave back of a decoding request (6-token prompt, 2 pages) it aborts under `cache`:
    "all" (its row and pages), "nothing" (row in use, no page free), or "" (something else, or it raised)."""
    s = modelless(cache=cache)
    s.abort_fn = fn
    req = decoding(s, probe_uid(), 6)
    row, pages = req.table_idx, list(s.cache.page_table.pages[req.table_idx])
    try:
        s.abort(req.uid)
    except Exception:
        return ""  # some other mistake: the hint of the failed check names it
    free = [p for p in pages if s.cache.allocator.is_free(p)]
    in_use = row in s.cache.page_table.used_rows()
    if not in_use and len(free) == len(pages):
        return "all"
    return "nothing" if in_use and not free else ""


def decides_by_the_handle(fn) -> bool:
    """`fn` gives a decoding request's row and pages back under the radix cache, nothing under the naive one."""
    return _after_abort(fn, "radix") == "all" and _after_abort(fn, "naive") == "nothing"


def by_the_handle(s, what: str) -> Optional[Mistake]:
    """The mistake, when `s` runs the naive cache and its answer kept `what` (in words) for this reason.
    Call it only once the check has failed: the probe builds schedulers on the shared engine."""
    if not isinstance(s.cache.prefix_cache, NaiveCache) or not decides_by_the_handle(s.abort_fn):
        return None
    return Mistake(
        f"{what}. This case runs the naive cache (cache='naive'). Your abort, given a decoding request on a "
        "scheduler of its own, gives back its row and pages under the radix cache and nothing under the naive "
        "cache: it decides whether the request holds memory by something only the radix cache sets, such as "
        "req.cache_handle",
        BY_THE_HANDLE,
    )


def or_by_the_handle(hint: Any, answer: list) -> Callable[[Any, Any], str]:
    """`hint`, unless the scene runs the naive cache and the answer (answer[0]) decides by the handle."""

    def named(scene: Any, diff: Any) -> str:
        if scene.setup.cache == "naive" and answer and decides_by_the_handle(answer[0]):
            return BY_THE_HANDLE
        return hint(scene, diff) if callable(hint) else hint

    return named
