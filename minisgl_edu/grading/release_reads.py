"""The request fields `cache.release()` reads, for the graders that watch what it read.

`release(req, cache_it)` learns what a request holds from the request itself: `req.table_idx`
(its page-table row), `req.prefix_len` and `req.shared_len` (where its own pages start),
`req.cache_handle` (the lock on its cached prefix) and, with `cache_it=True`, `req.cached_len`
(the computed tokens it caches). A student's code that changes one of them before `release()`
reads it makes `release()` give back the wrong pages. Two graders look for that, each around its
own exercise's calls: `abort/release_seen.py` (an abort) and `schedule/release_watch.py` (a refused
admission). They share the field names, the snapshot and the comparison here.
"""

from __future__ import annotations

from typing import Any

READS = ("table_idx", "prefix_len", "shared_len", "cache_handle")  # read by every release()
COUNTED = ("cached_len",)  # read by release(req, cache_it=True) only


def fields(req: Any, names: tuple[str, ...] = READS + COUNTED) -> dict[str, Any]:
    """The request's values of `names`, as release() would read them now."""
    return {name: getattr(req, name, None) for name in names}


def differs(before: Any, after: Any) -> bool:
    """Numbers by value; a node of the prefix cache (or None) by identity: the same node, not an equal one."""
    if isinstance(before, int) and isinstance(after, int):
        return before != after
    return before is not after
