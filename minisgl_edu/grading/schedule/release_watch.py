"""Exercise 5: what `cache.release()` read of a request, against the request as `cache.admit` left it.

`cache.release(req, cache_it=False)` works out what to give back from the request's own fields:
`req.prefix_len` (and `req.shared_len`) say how many of its leading pages are the prefix cache's,
shared and only locked, `req.table_idx` which row to free, `req.cache_handle` which node to unlock
(and, with `cache_it=True`, `req.cached_len` what to donate). Undoing a refused admission therefore
has an order: release first, while those fields are still what `cache.admit` set, and only then the
contract's reset (`req.cached_len = req.prefix_len = 0`). Reset first, and release takes the cached
prefix pages for the request's own and frees them, though the prefix cache still holds them.

The effect alone (a page "leak", or pages counted twice) does not say which step was out of order,
so `watched(s)` records, during one decision, every request's fields right after `cache.admit` (or
at the decision's start, for requests admitted earlier) and what each `cache.release()` call found;
`ReleaseWatch.mistake()` names the fields that changed in between, whichever they are.
"""

from __future__ import annotations

from typing import Any, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.release_reads import COUNTED, READS, differs, fields

# What release() reads each of its fields for (release_reads.py names them).
WHAT_FOR = {
    "table_idx": "the page-table row to free (at -1 it gives back nothing)",
    "prefix_len": "how many leading pages are the prefix cache's, locked and shared, not the request's own",
    "shared_len": "how many leading pages were handed over to the prefix cache",
    "cache_handle": "the prefix cache node to unlock",
    "cached_len": "the computed tokens it donates to the prefix cache (cache_it=True)",
}


# The generated phase's field (scenes.py) and its hint.
RELEASE_READ = "request fields changed between cache.admit and cache.release"
RELEASE_HINT = (
    "the request's fields were changed before cache.release() read them: call cache.release(req, "
    "cache_it=False) first, while the request is as cache.admit left it, and only then reset "
    "req.cached_len = req.prefix_len = 0 (release reads req.prefix_len to tell the prefix cache's pages "
    "from the request's own)"
)

CACHED_BACK_HINT = (
    "undo a refused admission with cache.release(req, cache_it=False): the default cache_it=True caches the "
    "request's prefix again, as for a request that finished, and that counts as a use of the prefix, which "
    "changes which cached pages eviction frees next"
)


class ReleaseWatch:
    """Installed on `s.cache` for one decision (a context manager): wraps `admit` and `release` on
    the instance, records, and takes the wrappers off again on exit."""

    def __init__(self, s: Any):
        self.cache = s.cache
        self.page_size = s.cache.page_size
        live = list(s.waiting) + list(s.running)
        self.as_left = {id(r): fields(r) for r in live if r.table_idx >= 0}
        self.changed: list[tuple[Any, dict, dict]] = []  # (request, as admit left it, as release read it)
        self.cached_back: list[tuple[Any, int]] = []  # (request, its cached prefix) released with cache_it=True

    def __enter__(self) -> "ReleaseWatch":
        cache = self.cache
        admit, release = cache.admit, cache.release

        def watched_admit(req, *args, **kwargs):
            out = admit(req, *args, **kwargs)
            self.as_left[id(req)] = fields(req)
            return out

        def watched_release(req, cache_it: bool = True):
            left = self.as_left.pop(id(req), None)
            if left is not None and cache_it and max(left["prefix_len"], left["cached_len"]) > 0:
                self.cached_back.append((req, max(left["prefix_len"], left["cached_len"])))
            if left is not None:
                read = fields(req)
                names = [n for n in READS + (COUNTED if cache_it else ()) if differs(left[n], read[n])]
                if names:
                    self.changed.append((req, {n: left[n] for n in names}, {n: read[n] for n in names}))
            return release(req, cache_it=cache_it)

        self._saved = {name: cache.__dict__.get(name) for name in ("admit", "release")}
        cache.admit, cache.release = watched_admit, watched_release
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, saved in self._saved.items():
            if saved is None:
                delattr(self.cache, name)
            else:
                setattr(self.cache, name, saved)

    def seen(self) -> list[str]:
        """Each release() call that found fields changed, as `request 1: req.prefix_len 0 (admit: 16)`."""
        return [
            f"request {req.uid}: " + ", ".join(f"req.{n} {_show(read[n])} (admit: {_show(left[n])})" for n in left)
            for req, left, read in self.changed
        ]

    def mistake(self) -> Optional[Mistake]:
        """The Mistake naming the fields changed before release() read them, or a refusal undone with
        cache_it=True (which hands the request's cached prefix back to the tree as a use), or None."""
        if not self.changed and self.cached_back:
            req, tokens = self.cached_back[0]
            return Mistake(
                f"your code undid the admission of request {req.uid} with cache.release(req), cache_it left at its "
                f"default True: its cached prefix ({tokens} tokens) went back into the prefix cache as if the request "
                "had finished, and that counts as a use of that prefix, so a later eviction frees other pages than "
                "it should (and later requests miss them)",
                CACHED_BACK_HINT,
            )
        if not self.changed:
            return None
        req, left, read = self.changed[0]
        names = list(left)
        was = ", ".join(f"req.{n} = {_show(read[n])}" for n in names)
        admit_set = ", ".join(f"req.{n} = {_show(left[n])}" for n in names)
        why = "; ".join(f"req.{n}: {WHAT_FOR[n]}" for n in names)
        lost = ""
        if "prefix_len" in left and left["prefix_len"] > read["prefix_len"]:
            pages = (left["prefix_len"] - read["prefix_len"]) // self.page_size
            lost = (
                f" So release took {pages} cached prefix page(s) for the request's own and put them on the free "
                "list, though the prefix cache still holds them."
            )
        fields = " and ".join(f"req.{n}" for n in names)
        return Mistake(
            f"your code called cache.release() for request {req.uid} with {was}, where cache.admit had "
            f"set {admit_set}: the request's fields were changed before release() read them. release() reads "
            f"them to know what to give back ({why}).{lost}",
            f"call cache.release(req, cache_it=False) first, while the request is as cache.admit left it, and "
            f"change {fields} only after it (the contract's reset, req.cached_len = req.prefix_len = 0, comes "
            "last): release() reads the request's fields to know which pages are its own",
        )


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, int) or value is None else "another node"
