"""What the stretch of exercise 2 (`abort_to_cache`) asserts about the cache after an abort.

An aborted request's computed full pages go into the prefix cache, as a finished request's do.
`check_cached(s, b)` compares the cache with a `fixtures.Held` snapshot `b` taken just before the
abort, page by page:

* every page the cache adopted is filed under the tokens it holds K/V for (`_check_filed`): the
  row's page i under `all_ids[:(i + 1) * page_size]`, the whole sequence from the first token;
* no page is both cached and free, and none left the cache (`_check_nothing_freed_from_the_cache`):
  the pages the request was admitted with (its prefix hit) and, for the first of n answers to one
  prompt, the prompt pages it handed to the cache after its prefill, are the cache's, not copies;
* the cache adopted exactly the request's computed full pages it did not hold yet
  (`_check_adopted`), and when it did not, `_too_many` / `_too_few` name what was counted wrong
  (req.cached_len rounded up to a page by the abort, the newest token, the partial page, a page
  reserved for a step not run, the prompt only, the output emptied before release());
* every other page of the request's own is free, and its lock on its prefix is released once
  (`_check_freed_and_unlocked`).

Each failed check raises a `Mistake` whose hint names the mistake found.
"""

from __future__ import annotations

from minisgl_edu.grading.abort.checks import check_consistent, check_row
from minisgl_edu.grading.abort.probes import (
    DROPS_A_COMPUTED_TOKEN,
    OUTPUT_EMPTIED,
    PROMPT_ONLY,
    caches_the_prompt_only,
    drops_a_computed_token,
    empties_the_output,
)
from minisgl_edu.grading.abort.release_seen import changed, reads_first
from minisgl_edu.grading.abort.rounded_len import rounded_up
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.fixtures import Held
from minisgl_edu.kvcache.naive_cache import NaiveCache
from minisgl_edu.scheduler import Scheduler


def _match(s: Scheduler, ids: list[int]) -> int:
    return len(s.cache.prefix_cache.match_prefix(ids)[1])


def _too_many(fn, b: Held, got: int, expect: int, ps: int) -> Mistake:
    """Name the mistake behind `got` cached pages along the request's ids, `expect` right (`fn`: the answer)."""
    c = b.cached_len
    rounded = rounded_up(fn, c, got, expect, ps)  # the count raised to a page before release(): the cause first
    if rounded is not None:
        return rounded
    head = (
        f"{got - expect} page(s) too many went into the prefix cache: the request had computed K/V for "
        f"{c} token(s) (req.cached_len), that is {c // ps} full page(s) of {ps}"
    )
    if c < b.prompt_len:
        return Mistake(
            f"{head}: pages for prompt tokens that were never computed. Only the first {c} of the prompt's "
            f"{b.prompt_len} tokens have K/V (the rest of a chunked prefill has not run)",
            "part-way through a chunked prefill only the chunks that ran are computed: count req.cached_len, not "
            "the prompt's length or the pages the row holds",
        )
    if got == len(b.row) and c % ps == 0:
        return Mistake(
            f"{head}, but every page of its row went in: a page is reserved for the next forward pass before "
            "that pass runs, so the last page of the row holds no computed K/V yet",
            "a page reserved for a step that has not run holds no K/V: count req.cached_len tokens, not the "
            "pages of the row",
        )
    if c % ps == ps - 1 and got == c // ps + 1:
        return Mistake(
            f"{head}. The extra page's last slot belongs to the newest sampled token, which is not run through "
            "the model until the next step",
            "the newest sampled token has no K/V until the next step runs it: count req.cached_len, not "
            "len(req.all_ids) (and a partial last page is never cached)",
        )
    if c % ps and got == c // ps + 1:
        return Mistake(
            f"{head}. The extra page is the partial last page: only {c % ps} of its {ps} slots hold computed K/V",
            "a partial last page is never cached: only whole pages of req.all_ids[:req.cached_len] go into the "
            "prefix cache (round down), the partial one goes back to the free list",
        )
    return Mistake(f"{head}: pages with tokens whose K/V was never computed are in the cache")


@reads_first
def check_cached(s: Scheduler, b: Held, *, others_lock: int = 0, hit: int | None = None) -> None:
    """After the abort (and after its batch landed): the computed full pages are cached, everything
    else of the request's own is free, nothing twice, no lock left behind. `others_lock`: pages
    that requests still running keep locked. `hit`: for the first of n answers to one prompt, the
    pages of its row that were its prefix hit (req.prefix_len // page_size); the rest of `b.shared`
    it handed to the prefix cache after its prefill (req.shared_len)."""
    check_row(s, b.row_idx)
    cached = set(s.cache.prefix_cache.cached_pages())
    _check_filed(s, b, cached)
    _check_nothing_freed_from_the_cache(s, b, cached, b.own_from if hit is None else hit)
    keeps = not isinstance(s.cache.prefix_cache, NaiveCache)
    want_adopted = _check_adopted(s, b, cached, keeps)
    _check_freed_and_unlocked(s, b, cached, keeps, want_adopted, others_lock)
    check_consistent(s)


def filed_under(tree, page: int) -> tuple[int, ...] | None:
    """The tokens a radix tree files `page` under: its path from the root to the end of that page
    (None for a cache without a tree, or a page it does not hold)."""
    root, ps = getattr(tree, "root", None), getattr(tree, "page_size", 1)
    stack = list(root.children.values()) if root is not None else []
    while stack:
        node = stack.pop()
        if page in node.pages:
            keys, up = [node.key[: (node.pages.index(page) + 1) * ps]], node.parent
            while up is not None and up is not root:
                keys.append(up.key)
                up = up.parent
            return tuple(t for key in reversed(keys) for t in key)
        stack.extend(node.children.values())
    return None


def misfiled(s: Scheduler, row: list[int], ids: list[int]) -> list[int]:
    """The pages of `row` (a request's row, `ids` its tokens) that the prefix cache files under other
    tokens than the ones before and in them, ids[:(i + 1) * page_size] for page i (a page filed where
    it belongs but only partly filled is left to the other checks)."""
    ps, tree, out = s.cache.page_size, s.cache.prefix_cache, []
    for i, p in enumerate(row):
        got = filed_under(tree, p)
        if got is not None and tuple(ids[: (i + 1) * ps])[: len(got)] != got:
            out.append(p)
    return out


FILED_FROM_THE_ROOT = (
    "insert the whole computed sequence from its first token, req.all_ids[:full * page_size], with the row's "
    "pages from the first, pages[:full]; not only the part after the cached prefix. insert() files a sequence "
    "from the root, as a prompt's start: it walks the part the cache already holds and returns how many pages "
    "it had (free the request's own copies among those)"
)


FILED_ANYWHERE = (
    "insert() files page i of the list it is given under ids[:(i + 1) * page_size], from the root: give it the "
    "whole computed sequence from the request's first token, req.all_ids[:full * page_size], with the row's "
    "pages from the first, pages[:full] (not only the part after the cached prefix)"
)


def _check_filed(s: Scheduler, b: Held, cached: set[int]) -> None:
    """Each page of the request's row that the cache adopted is filed under the tokens whose K/V it
    holds: full computed page i of the row under all_ids[:(i + 1) * page_size]. A page filed under
    a later part of the sequence alone (a sequence inserted from the middle) serves prompts that
    start there."""
    ps, tree = s.cache.page_size, s.cache.prefix_cache
    for i, p in enumerate(b.row[: b.full(ps)]):  # a page past them is one too many: `_too_many` names it
        if p not in cached or p in b.cached:
            continue
        want, got = tuple(b.all_ids[: (i + 1) * ps]), filed_under(tree, p)
        if got is None or want[: len(got)] == got:
            continue  # where it belongs (a partly filled page: `_too_many`)
        head = (
            f"page {p}, page {i} of the request's row (the K/V of tokens {i * ps} to {(i + 1) * ps - 1} of "
            f"req.all_ids, computed after the {i * ps} tokens before them), went into the prefix cache filed "
            f"under the wrong tokens"
        )
        if 0 < len(got) < len(want) and want[len(want) - len(got) :] == got:
            k = i + 1 - len(got) // ps
            raise Mistake(
                f"{head}: under a sequence of its own that starts with token {k * ps} of req.all_ids (the first "
                f"token after its first {k} page(s), its cached prefix), filed from the root as if it were a "
                "prompt's start. No request that starts like the aborted one finds it, and one whose prompt starts "
                "with those tokens would read K/V computed at other positions, after other tokens",
                FILED_FROM_THE_ROOT,
            )
        raise Mistake(
            f"{head}: not under req.all_ids[:{(i + 1) * ps}], the tokens from the first to the end of that page",
            FILED_ANYWHERE,
        )


SHARED_LEN = (
    "the first of n answers to one prompt hands its prompt's full pages to the prefix cache after its prefill "
    "(req.shared_len tokens, more than req.prefix_len): the cache already holds them, they are not copies. The "
    "request's own pages start at max(req.prefix_len, req.shared_len) // page_size: free only its copies from "
    "there up to insert()'s count (release() knows)"
)


def _check_nothing_freed_from_the_cache(s: Scheduler, b: Held, cached: set[int], hit: int) -> None:
    """No page is both cached and free (a request given it would overwrite K/V), none left the cache.
    The row's first `hit` pages were the request's prefix hit; its pages from there to `b.own_from`
    it handed to the cache itself (the first of n answers to one prompt)."""
    both = [p for p in cached if s.cache.allocator.is_free(p)]
    prefix = [p for p in both if p in b.row[:hit]]
    handed = [p for p in both if p in b.row[hit : b.own_from]]
    if prefix:
        raise Mistake(
            f"{len(prefix)} page(s) of the request's prefix hit (the first {hit} page(s) of its row, the "
            "prefix cache's own pages it was admitted with) went onto the free list while the cache still holds "
            "them: they are not copies. The next request given one would overwrite K/V the cache hands out",
            "the pages of the prefix the request was admitted with (req.prefix_len tokens) are the cache's: "
            "never free them; only the request's own copies of pages the tree already had (insert()'s count, "
            "past the prefix) go to the free list" + (f". And {SHARED_LEN}" if handed else ""),
        )
    if handed:
        ps = s.cache.page_size
        raise Mistake(
            f"the request is the first of n=2 answers to one prompt: after its prefill it handed its prompt's "
            f"first {b.own_from} full page(s) to the prefix cache (req.shared_len = {b.own_from * ps} tokens; its "
            f"prefix hit, req.prefix_len, was {hit * ps}), which the second answer reads. {len(handed)} of those "
            "pages went onto the free list as duplicates while the cache still holds them: the next request "
            "given one would overwrite K/V the cache hands out",
            SHARED_LEN,
        )
    if both:
        raise Mistake(
            f"{len(both)} page(s) are in the prefix cache and on the free list at once: a page the cache "
            "adopted was freed as well (inserted twice, or freed after insert() took it). The next request "
            "given that page would overwrite K/V the cache still hands out",
            "a page insert() adopted is the cache's: insert once, and never free it after",
        )
    lost = b.cached - cached
    assert not lost, f"{len(lost)} page(s) of the prefix cache were taken out of it: the cache's pages are not yours"


def _check_adopted(s: Scheduler, b: Held, cached: set[int], keeps: bool) -> set[int]:
    """The cache adopted exactly the request's computed full pages it did not hold yet, and now holds every
    computed full page along its ids (the naive cache keeps none). Returns the pages it should adopt."""
    ps = s.cache.page_size
    full = b.full(ps)
    expect = max(full, b.known) if keeps else 0
    adopted = cached - b.cached
    want_adopted = set(b.row[b.known : full]) if keeps else set()
    extra = adopted - want_adopted
    if extra:
        mine = [b.row.index(p) for p in extra if p in b.row]
        assert len(mine) == len(extra), "the prefix cache took pages that were not the aborted request's"
        if min(mine) < b.known:
            raise AssertionError(
                "the prefix cache took the request's copy of pages it already held: pages for the same tokens "
                "must not be inserted twice (insert() keeps its own copy and returns how many it had)"
            )
        raise _too_many(s.abort_fn, b, max(mine) + 1, expect, ps)
    got = _match(s, b.all_ids) if keeps else 0
    if got > expect:
        raise _too_many(s.abort_fn, b, got, expect, ps)
    if got < expect or adopted != want_adopted:
        raise _too_few(s, b, got, expect, adopted)
    return want_adopted


def _too_few(s: Scheduler, b: Held, got: int, expect: int, adopted: set[int]) -> Exception:
    """Name the mistake behind too few pages cached along the request's ids (`got`, `expect` right).
    A release() that read a req.cached_len the abort had changed is named after the probes that name
    a wrong count (the prompt only, the newest token dropped again) and before the symptoms."""
    ps, fn = s.cache.page_size, s.abort_fn
    full = b.full(ps)
    if got <= max(b.known, b.prompt_len // ps) < full and empties_the_output(fn):
        return Mistake(
            f"only the prompt's full pages went into the prefix cache: {b.cached_len} tokens were computed "
            f"({full} full pages), {b.prompt_len} of them the prompt's, and the cache holds {got} page(s) along "
            "its tokens. Your abort, run again on a request with output, emptied req.output_ids before "
            "release() read req.all_ids",
            OUTPUT_EMPTIED,
        )
    if got <= max(b.known, b.prompt_len // ps) < full and caches_the_prompt_only(fn):
        return Mistake(
            f"only the prompt's full pages went into the prefix cache: {b.cached_len} tokens were computed "
            f"({full} full pages), {b.prompt_len} of them the prompt's, and the cache holds {got} page(s) "
            "along its tokens",
            PROMPT_ONLY,
        )
    if b.cached_len % ps == 0 and got == full - 1 and drops_a_computed_token(fn):
        return Mistake(
            f"one page too few went into the prefix cache: {b.cached_len} tokens were computed (req.cached_len), "
            f"{full} full pages of {ps}, and only {got} were cached; the last one, full of computed K/V, went to "
            "the free list",
            DROPS_A_COMPUTED_TOKEN,
        )
    mistake = changed(s, counted=True)
    if mistake is not None:
        return mistake
    if got <= b.known and not adopted:
        return Mistake(
            f"none of the request's computed pages went into the prefix cache: it had {b.cached_len} "
            f"computed token(s), {full} full page(s) of {ps}, and a new request with the same "
            "start would have reused them (the base part's answer gives them all to the free list)",
            "a request part-way through a chunked prefill is still in scheduler.waiting, but the chunks that ran "
            "are computed: cache them too, release(req, cache_it=True)"
            if b.cached_len < b.prompt_len
            else "cache what the request computed: release(req, cache_it=True) files its computed full pages "
            "in the prefix cache",
        )
    if got == b.prompt_len // ps:
        return Mistake(
            f"only the prompt's {got} full page(s) went into the prefix cache, but {b.cached_len} tokens were "
            f"computed ({full} full pages)",
            PROMPT_ONLY,
        )
    return AssertionError(
        f"the prefix cache holds {got} page(s) along the request's tokens, expected {expect} "
        f"(req.cached_len={b.cached_len}, page size {ps}): its computed full pages, filed under their tokens"
    )


def _check_freed_and_unlocked(
    s: Scheduler, b: Held, cached: set[int], keeps: bool, want_adopted: set[int], others_lock: int
) -> None:
    """Every page of the request's own but those the cache should adopt is back on the free list (no
    leak, nothing freed that was not the request's), and its lock on its cached prefix is released
    exactly once: every cached page is evictable but those the running requests keep locked."""
    cache = s.cache
    own = len(b.row) - b.own_from
    want_free = b.free + own - len(want_adopted)
    if cache.num_free < want_free:
        raise Mistake(
            f"{want_free - cache.num_free} of the request's page(s) are neither free nor in the prefix cache (a leak): "
            "insert() returns how many leading pages the cache already held, and the request's own copies of "
            "those, like its pages after the last full computed one, go back to the free list"
            + (" (the naive cache keeps nothing: insert() says it already has every page)" if not keeps else ""),
            "free the request's copies of the first n pages, n being what insert() returned, and its pages "
            "after the last full computed one",
        )
    assert cache.num_free == want_free, (
        f"{cache.num_free - want_free} page(s) too many are free: a page was freed that was not the request's own"
    )
    evictable = cache.prefix_cache.num_evictable
    want_evictable = len(cached) - others_lock
    if evictable > want_evictable:
        raise Mistake(
            f"{evictable - want_evictable} cached page(s) that another running request still reads became "
            "evictable: the prefix lock was released twice (release() already unlocks req.cache_handle)",
            "unlock the request's cached prefix once: release() already does",
        )
    assert evictable == want_evictable, (
        "the cached prefix the request was using is still locked, so it can never be evicted: unlock it once"
    )
