"""What evict(n) counts: n is a number of pages. An answer that counts the tokens it freed
(len(freed) * page_size, or the tokens of the nodes' keys) stops once n tokens are free, with only
about n / page_size pages freed. This probe plays evict(n) for a few n on fresh trees of one-page
leaves, where every count of pages is exact, and recognises that answer by what it freed: the fewest
pages whose tokens reach n, each time.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.tree import _new

LEAVES = 6  # one-page leaves [k, k] (page 20 + k), k = 1..6, sharing nothing
ASKED = (2, 4, 6)

PAGES_NOT_TOKENS = (
    "evict(n) counts pages, not tokens: free at least n pages (stop when len(freed) >= n), whatever the "
    "page size; n tokens would be only n / page_size pages"
)


def _freed(cls, n: int) -> int | None:
    """How many pages evict(n) frees on a fresh tree of LEAVES one-page leaves; None on a crash."""
    try:
        cache = _new(cls)
        for k in range(1, LEAVES + 1):
            cache.insert([k] * cache.page_size, [20 + k])
        return len(cache.evict(n))
    except Exception:
        return None


def counts_tokens(cls) -> str:
    """' (...)' saying what evict(n) freed on the probe's trees when every time it freed just enough
    pages for n tokens (n / page_size, rounded up) rather than n pages; else ''."""
    ps = _new(cls).page_size
    got = {n: _freed(cls, n) for n in ASKED}
    if any(got[n] != -(-n // ps) for n in ASKED) or all(got[n] == n for n in ASKED):
        return ""
    said = ", ".join(f"evict({n}) freed {got[n]}" for n in ASKED)
    return (
        f" (on {LEAVES} cached leaves of one page each (page size {ps}), {said}: each time just enough pages for "
        f"n tokens, not n pages)"
    )
