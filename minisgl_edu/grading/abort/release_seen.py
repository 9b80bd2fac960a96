"""What `cache.release()` read of an aborted request, against the request as it was before the abort.

`release(req, cache_it)` learns what the request holds from the request's own fields:
`req.table_idx` (its page-table row), `req.prefix_len` and `req.shared_len` (its own pages
start after them: the row's pages before are the prefix cache's) and `req.cache_handle` (the
lock on the cached prefix it gives up). An abort that changes one of them before `release()`
reads it (say it zeroes `req.prefix_len` to leave no trace, or sets `req.table_idx = -1`) makes
`release()` give back the wrong pages, or none. The checks then see only the effect: prefix
pages freed, a row or a lock left behind.

`watch(s)` wraps the scheduler's `cache.release` so that the release the answer asks for records
the fields it reads at the moment it reads them (a request whose batch is in flight is read when
the batch lands); `aborting(s, req)`, around the answer's abort, notes the fields as they were
when it began, and which release is the answer's (the engine may call release() again later).
When a check of the pages, rows or locks fails, `reads_first` (a decorator of those checks)
raises the mistake that explains it: the fields `release()` saw, the ones the request had, and
the hint to call `release()` on the request as it is. Only a failed check is re-named, so a
change that does not matter (fields cleared after release() has run) is never reported. The
A field changed after release() was called, while that release waits for a batch in flight, is
read by the waiting release too: `changed_after_asked(s, req)`, asked right after the abort, compares
the request with what it was when release() was called and names it before the batch lands. The
generated phase watches its schedulers too: `or_fields_changed` wraps a field's hint, and on a
difference replays the answer on the scene inside `recording()` to find such a release.
`watch` also notes an abort that unpins its request itself (`unpinned`): the pin is the batch's, and
without it release() gives everything back at once; that mistake is named before any field's. And
it notes a release() of a stand-in (`stand_in`): an object with the aborted request's uid that is
not the request (a copy made to change a field). The cache manager knows a request by identity,
so the copy's release does not wait for the request's batch in flight, and what release() resets
(the row index, the lock) is reset on the copy; named after a changed field.
"""

from __future__ import annotations

import functools
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.release_reads import COUNTED, READS, differs, fields

# req.cached_len (COUNTED, read with cache_it=True): an answer that sets it to a wrong count is named
# by the stretch's own checks first (the newest token dropped, the prompt only, ...), so
# `changed(s, counted=True)` is asked only where they name nothing.
OWN_FROM = "req.prefix_len and req.shared_len: where its own pages start, the pages before being the prefix cache's"
MEANS = {
    "table_idx": "req.table_idx: its row",
    "prefix_len": OWN_FROM,
    "shared_len": OWN_FROM,
    "cache_handle": "req.cache_handle: the lock it gives up",
    "cached_len": "req.cached_len: the computed tokens it caches",
}


@dataclass
class Watch:
    before: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict)  # id(req) -> (req, fields)
    seen: list[tuple[Any, dict[str, Any], bool]] = field(default_factory=list)  # req, what it read, waited
    now: int = 0  # id() of the request whose abort is running, 0 between aborts
    waited: set[int] = field(default_factory=set)  # its release waits for a batch in flight
    asked: dict[int, tuple[dict[str, Any], bool]] = field(default_factory=dict)  # id(req) -> (fields, cache_it)
    unpinned: set[int] = field(default_factory=set)  # the abort unpinned it itself, its batch in flight
    stand_ins: int = 0  # releases, inside an abort, of an object with the request's uid that is not the request


_WATCHES: "weakref.WeakKeyDictionary[Any, Watch]" = weakref.WeakKeyDictionary()
_RECORDINGS: list[list[Watch]] = []


@contextmanager
def recording() -> Iterator[list[Watch]]:
    """Every scheduler watched inside the block adds its `Watch` to the list."""
    got: list[Watch] = []
    _RECORDINGS.append(got)
    try:
        yield got
    finally:
        _RECORDINGS.remove(got)


def watch(s: Any) -> None:
    """Record, on `s`, the request fields the release() an abort asks for reads."""
    cache = s.cache
    inner = cache.release
    w = _WATCHES.setdefault(s, Watch())
    for got in _RECORDINGS:
        got.append(w)
    pinned = getattr(cache, "_pins", {})

    def release(req: Any, cache_it: bool = True) -> None:
        key = id(req)
        aborted = w.before[w.now][0] if w.now in w.before else None
        if aborted is not None and req is not aborted and getattr(req, "uid", None) == aborted.uid:
            w.stand_ins += 1
        if pinned.get(key):
            if w.now == key:
                w.waited.add(key)  # read later, when the batch lands (unpin calls release again)
                w.asked.setdefault(key, (fields(req), cache_it))
        elif w.now == key or key in w.waited:
            w.seen.append((req, fields(req), key in w.waited))
            w.waited.discard(key)
        return inner(req, cache_it)

    cache.release = release
    inner_unpin = cache.unpin

    def unpin(reqs: Any) -> None:
        # the landing batch unpins with w.now == 0; an unpin inside the abort is the answer's own
        w.unpinned.update(id(r) for r in reqs if w.now == id(r) and pinned.get(id(r)))
        return inner_unpin(reqs)

    cache.unpin = unpin


@contextmanager
def aborting(s: Any, req: Any) -> Iterator[None]:
    """The answer's abort of `req` runs inside: its fields now are what release() should read."""
    w = _WATCHES.get(s)
    if w is None or req is None:
        yield
        return
    w.before[id(req)], w.now = (req, fields(req)), id(req)
    try:
        yield
    finally:
        w.now = 0


def _show(values: dict[str, Any]) -> str:
    def one(name: str, v: Any) -> str:
        if name == "cache_handle":
            return "req.cache_handle = None" if v is None else "req.cache_handle = a node of the prefix cache"
        return f"req.{name} = {v}"

    return ", ".join(one(k, v) for k, v in values.items())


UNPINNED = (
    "your abort called scheduler.cache.unpin() on the request whose batch is in flight, so release() did not "
    "wait: it gave the row and pages back at once while the GPU may still write them, and the batch's own "
    "unpin when it lands finds no pin left",
    "never unpin the request yourself: the pin is the batch's (the overlap loop unpins it when the batch lands). "
    "Call scheduler.cache.release() with the pin still on: it waits for the batch, then gives everything back",
)


def unpinned(s: Any) -> Optional[Mistake]:
    """The mistake when the abort unpinned a request whose batch was in flight (the pin is the batch's)."""
    w = _WATCHES.get(s)
    return Mistake(*UNPINNED) if w is not None and w.unpinned else None


STAND_IN = (
    "your abort called scheduler.cache.release() with an object that has the request's uid but is not the "
    "request (a copy). The cache manager knows a request by identity: the batch in flight pinned the request, "
    "not the copy, so the copy's release does not wait for the batch, and what release() resets (the row index, "
    "the lock) is reset on the copy while the request keeps them",
    "release the request itself, not a copy: scheduler.cache.release(req, ...) with req as it is. release() "
    "already counts only the whole pages of req.cached_len into the prefix cache, so there is nothing to cut first",
)


def stand_in(s: Any) -> Optional[Mistake]:
    """The mistake when an abort released a copy of its request instead of the request."""
    w = _WATCHES.get(s)
    return Mistake(*STAND_IN) if w is not None and w.stand_ins else None


def changed(s: Any, counted: bool = False) -> Optional[Mistake]:
    """The mistake when a release() of an aborted request on `s` read fields the abort had changed
    (`counted`: req.cached_len too)."""
    w = _WATCHES.get(s)
    return None if w is None else _changed(w, counted)


def _changed(w: Watch, counted: bool = False) -> Optional[Mistake]:
    for req, read, waited in w.seen:
        if id(req) not in w.before or w.before[id(req)][0] is not req:
            continue
        was = w.before[id(req)][1]
        names = READS + (COUNTED if counted and not waited else ())  # cached_len may move as a batch lands
        diff = [n for n in names if differs(was[n], read[n])]
        if not diff:
            continue
        means = "; ".join(dict.fromkeys(MEANS[n] for n in diff))
        cleared = ", ".join(f"req.{n}" for n in names[:-1]) + f" or req.{names[-1]}"
        asked = w.asked.get(id(req), (was, False))[0] if waited else was
        if waited and not any(differs(was[n], asked[n]) for n in diff):  # changed after release() was asked
            return _after_asked(
                {n: asked[n] for n in diff},
                {n: read[n] for n in diff},
                "the waiting release, when the batch landed, read",
            )
        when = (
            " (its batch was in flight: release() waited for the batch to land and read the request then, "
            "after your abort had changed it)"
            if waited
            else ""
        )
        return Mistake(
            f"cache.release() read the aborted request with {_show({n: read[n] for n in diff})}, but when your "
            f"abort began the request had {_show({n: was[n] for n in diff})}{when}. release() learns from the "
            f"request's fields what it holds ({means}), so it gave "
            "back the wrong pages, or none",
            "the request's fields were changed before cache.release() read them: call release(req, ...) on the "
            f"request as it is, and do not change {cleared} yourself (before it, or while its release waits for a "
            "batch in flight): release() resets what it must once it has run",
        )
    return None


READ_FOR = {
    "table_idx": "it reads req.table_idx to find the row",
    "prefix_len": "it reads req.prefix_len and req.shared_len to find where its own pages start",
    "shared_len": "it reads req.prefix_len and req.shared_len to find where its own pages start",
    "cache_handle": "it reads req.cache_handle to find the lock it gives up",
    "cached_len": "it reads req.cached_len to know how many computed tokens to cache",
}


def changed_after_asked(s: Any, req: Any) -> Optional[Mistake]:
    """The mistake when the abort asked for `req`'s release while its batch was in flight (so the
    release waits and reads the request when the batch lands) and then changed a field that
    release reads (req.cached_len only for release(req, cache_it=True)). Read right after the
    abort, before the batch lands: what the waiting release will read against what the request
    had when the abort called release()."""
    w = _WATCHES.get(s)
    if w is None or req is None or id(req) not in w.waited or id(req) not in w.asked:
        return None
    asked, cache_it = w.asked[id(req)]
    now = fields(req)
    names = READS + (COUNTED if cache_it else ())
    diff = [n for n in names if differs(asked[n], now[n])]
    if not diff:
        return None
    return _after_asked({n: asked[n] for n in diff}, {n: now[n] for n in diff}, "right after abort() the request had")


def _after_asked(asked: dict[str, Any], seen: dict[str, Any], who: str) -> Mistake:
    """The mistake of fields changed after release() was asked (`asked`: their values then), while the
    release waited for a batch in flight; `seen`: their values as `who` found them."""
    reads = "; ".join(dict.fromkeys(READ_FOR[n] for n in asked))
    shown = dict.fromkeys(f"req.{n}" for n in asked)
    return Mistake(
        f"with its batch in flight, {who} {_show(seen)}, but when your abort called cache.release() the "
        f"request had {_show(asked)}. With the batch in flight, release() waits for the batch to land and only "
        f"then reads the request's fields ({reads}), so it reads your changed values and gives back the wrong "
        "pages, or none",
        "the request's fields were changed after cache.release() was called, while its release waits for "
        f"the batch in flight: do not clear {', '.join(shown)} (or change any field release() reads) yourself: "
        "release() reads them when the batch lands, and resets what it must once it has run",
    )


def reads_first(check: Callable[..., Any]) -> Callable[..., Any]:
    """A check whose first argument is the scheduler: when it fails and a release() of an aborted
    request read fields the abort had changed, that mistake is raised instead of the check's."""

    @functools.wraps(check)
    def checked(s: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return check(s, *args, **kwargs)
        except AssertionError as e:
            mistake = unpinned(s) or changed(s) or stand_in(s)
            if mistake is None:
                raise
            raise mistake from e

    return checked


def or_fields_changed(hint: Any, replay: Callable[[Any], Any]) -> Callable[[Any, Any], str]:
    """A generated field's `hint` (a string or a function of the scene and the difference), unless
    `replay(scene)`, the answer played again on the scene, shows a release() that read fields the
    abort had changed: then that mistake's hint."""

    def named(scene: Any, diff: Any) -> str:
        with recording() as watches:
            try:
                replay(scene)
            except Exception:
                pass  # the difference's own hint stands
        for w in watches:
            mistake = Mistake(*UNPINNED) if w.unpinned else _changed(w)
            if mistake is None and w.stand_ins:
                mistake = Mistake(*STAND_IN)
            if mistake is not None:
                return mistake.hint
        return hint(scene, diff) if callable(hint) else hint

    return named
