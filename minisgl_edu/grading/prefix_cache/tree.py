"""Exercise 6's shared pieces: building and reading small trees through the public methods only
(`_new`, `_match`, `_insert`, `_evict` check what comes back as they go), and the cache manager
with few pages that plays a workload of admissions, finishes and aborts (`_play`). The base part
(base.py) and the LFU stretch (lfu.py) both use them.

The engine run (`_run`): a few requests through the real scheduler with the class as its prefix
cache, one of them reusing the pages an earlier one left.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import random
from typing import Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.core import Case, Mistake, hinted
from minisgl_edu.grading.feedback import raised_by_grader
from minisgl_edu.grading.harness import collect, new_scheduler, remember
from minisgl_edu.grading.prefix_cache.aliasing import aliased, note
from minisgl_edu.grading.prefix_cache.edge_end import EMPTY_LOWER_PART, empty_lower_part
from minisgl_edu.grading.prefix_cache.edge_pages import PAGES_BEFORE_THE_SPLIT, pages_before_the_split
from minisgl_edu.grading.prefix_cache.evict_return import EVICT_RETURNS_IDS, returns_a_count
from minisgl_edu.grading.prefix_cache.exact_n import STOPS_AT_EXACTLY_N, stops_only_at_exactly_n
from minisgl_edu.grading.prefix_cache.kept_state import kept_state
from minisgl_edu.grading.prefix_cache.links import check_parent_links
from minisgl_edu.grading.prefix_cache.lock_scope import check_leaves_under_a_lock
from minisgl_edu.grading.prefix_cache.misfiled import misfiled_hint
from minisgl_edu.grading.prefix_cache.new_leaf import new_leaf_locked
from minisgl_edu.grading.prefix_cache.node_up import PAGES_GATHERED_UP, gathered_up
from minisgl_edu.grading.prefix_cache.pair_order import check_pair
from minisgl_edu.grading.prefix_cache.root_leaf import ROOT_LEAF_KEPT, root_leaf_kept
from minisgl_edu.grading.prefix_cache.shared_children import SHARED_CHILDREN, children_shared
from minisgl_edu.grading.prefix_cache.split_children import SPLIT_CHILDREN, children_moved_up
from minisgl_edu.grading.prefix_cache.split_pages import SPLIT_PAGES, split_pages_wrong
from minisgl_edu.grading.prefix_cache.takes_over import TAKES_OVER, takes_over
from minisgl_edu.grading.prefix_cache.token_walk import TOKEN_WALK, cut_inside_a_page
from minisgl_edu.grading.prefix_cache.whole_cut import CUT_PROBES
from minisgl_edu.kvcache import CacheManager, KVPool, OutOfPages, PageTable, pages_for
from minisgl_edu.kvcache.radix_cache import RadixCache as reference

PS = 2  # page size of the hand-built trees
A = [1, 2, 3, 4, 5, 6, 7, 8]  # four pages
A_PAGES = [10, 11, 12, 13]


# Asked in turn for any failed check, after the split's page cut: the first that recognises its
# mistake names it, whatever symptom the check saw. Each returns ' (...)' saying what it saw, or ''.
_PROBES = (
    (returns_a_count, EVICT_RETURNS_IDS),  # first: the probes that read evict's pages cannot use a number
    (cut_inside_a_page, TOKEN_WALK),  # an edge cut at the first different token: later walks miss a page
    (children_moved_up, SPLIT_CHILDREN),  # a split's children hung beside the lower part: matches past it short
    (pages_before_the_split, PAGES_BEFORE_THE_SPLIT),  # the whole edge's pages, taken before the cut: too many
    (empty_lower_part, EMPTY_LOWER_PART),  # a split at an edge's end: the walks after it stop short
    (stops_only_at_exactly_n, STOPS_AT_EXACTLY_N),  # an evict that overshoots breaks most checks of evict
    (takes_over, TAKES_OVER),  # the caller's pages on a cached prefix: wrong pages everywhere after
    *CUT_PROBES,  # a match cut to whole pages wrongly: a page count as tokens, ids[:-0], a bit mask
    (gathered_up, PAGES_GATHERED_UP),  # pages listed from the deepest node up: every match over two nodes
    (root_leaf_kept, ROOT_LEAF_KEPT),  # a freed leaf under the root left in the tree: cached and free
)


def _own_hint(run):
    """A failed check whose message ends in "Hint: ..." shows that hint, its own mistake's, in place
    of the case's (which names only the part of the contract the case plays). Any failed check first
    plays a split on a fresh tree for a lower part left in its own children (shared_children.py: a
    cycle, which every later probe's walk would go round), then for parts given other pages than
    their keys' (split_pages.py), named as the cause whatever symptom the check saw; then the probes
    of `_PROBES` in turn (each module says its mistake); last, state kept from an earlier call, an
    evict's heap or a match's answer (kept_state.py)."""

    @functools.wraps(run)
    def case(cls):
        try:
            run(cls)
        except AssertionError as e:
            text = str(e)
            if not (isinstance(e, Mistake) or raised_by_grader(e)):
                raise
            said = text.split("Hint: ")[0].rstrip()
            looped = children_shared(cls)  # first: every later probe walks a tree that a split makes cyclic
            if looped:
                raise Mistake(said if looped in said else f"{said.rstrip('.')}. {looped}", SHARED_CHILDREN) from None
            split = split_pages_wrong(cls)  # the usual cause of pages a match should not have
            if split is not None:
                raise Mistake(f"{said} {split}", SPLIT_PAGES) from None
            for probe, hint in _PROBES:
                found = probe(cls)
                if found:
                    raise Mistake(f"{said}{found}", hint) from None
            seen, why = kept_state(cls)  # an evict heap or a match kept from an earlier call: stale later
            if seen:  # a case that repeats an earlier case's message has the probe's words already
                raise Mistake(said if seen in said else f"{said}{seen}", why) from None
            if "Hint: " not in text:
                raise
            said, hint = text.rsplit("Hint: ", 1)
            raise Mistake(said.rstrip(), hint.strip()).with_traceback(e.__traceback__) from e.__cause__

    return case


def own_hints(cases: list[Case]) -> list[Case]:
    """The hand-written cases with `_own_hint` around each (the generated one has its own hints)."""
    return [c if c.generated else dataclasses.replace(c, run=_own_hint(c.run)) for c in cases]


def _new(cls, page_size: int = PS):
    cache = cls(page_size)
    for name in ("match_prefix", "lock", "unlock", "insert", "evict", "cached_pages"):
        assert callable(getattr(cache, name, None)), f"your class has no method {name}()"
    return cache


MATCH_NONE = (
    "match_prefix returns the node where the match ends, the root when nothing matches (pages []), never None: "
    "the cache manager locks that node for every request it admits and unlocks it when the request ends"
)


def _match(cache, ids: list[int]) -> tuple[object, list[int]]:
    got = cache.match_prefix(list(ids))
    check_pair(got, ids)  # a pair, and in the order (node, pages)
    check_parent_links(cache, f"match_prefix({ids})")
    node, pages = got
    assert isinstance(pages, list) and all(isinstance(p, int) for p in pages), (
        f"match_prefix's pages must be a list of page ids (ints), not {pages!r}"
    )
    if node is None:  # seen here, before lock(None) crashes on it with a cause that names no call
        raise Mistake(f"match_prefix({ids}) returned None as its node (pages {pages})", MATCH_NONE)
    note(cache, ids, pages)
    return node, pages


def _pages(cache, ids: list[int]) -> list[int]:
    return _match(cache, ids)[1]


LRU_HINT = (
    "a node is used when match_prefix or insert passes it or creates it (a split's upper part is on "
    "that path, the lower part keeps its last use); evict takes the unlocked leaf whose last use is the "
    "oldest. A heap (heapq) of (last use, a tie-breaker such as id(node), node) over the unlocked leaves, "
    "to which a parent left childless is added, does it"
)
# The hints of case_lru's checks, each the mistake its check shows
LRU_BY_USE = (
    "evict goes by each leaf's last use, the oldest first, not by the order a walk of the tree meets the "
    "leaves: keep a last-use stamp on every node"
)
LRU_MATCH = "match_prefix is a use: it marks every node whose pages it returns as used, just now"
LRU_MATCH_PATH = (
    "match_prefix is a use of every node whose pages it returns: the nodes above the one it ends at too, "
    "not only the node the caller locks"
)
LRU_INSERT = "insert is a use too: it marks every node it passes as used, not only the leaf it adds"
INSERT_RETURNS = "the contract: what insert returns"
MATCH_RETURNS = "the contract: what match_prefix returns"
MATCH_KEEPS_LAST = (
    "match_prefix matches all the ids it is given, down to their last whole page: leaving the last prompt "
    "token out is the cache manager's job (it passes prompt[:-1]), so do not drop a token again here"
)


def drops_the_last_token(ids: list[int], want: list[int], got, page_size: int) -> bool:
    """A match that left the last token of `ids` out itself: `ids` ends on the last page it should
    return, and that page is all that is missing."""
    return bool(want) and got == want[:-1] and len(ids) == len(want) * page_size


def _drops_the_last_token_alone(cls, page_size: int) -> bool:
    """The answer drops the last token on a tree of one edge, with no split anywhere: three whole
    pages inserted and matched again come back as two (with two pages, a match cut to a page count,
    match_cut.py, would come back one page short as well)."""
    try:
        probe = cls(page_size)
        ids = [1] * page_size + [2] * page_size + [3] * page_size
        probe.insert(list(ids), [10, 11, 12])
        return probe.match_prefix(list(ids))[1] == [10, 11]
    except Exception:
        return False


EVICT_MAY_FREE = "the contract: what evict may free, and that it returns every page it removes"


def _insert(cache, ids: list[int], pages: list[int], expect: int, why: str) -> None:
    got = cache.insert(list(ids), list(pages))
    check_parent_links(cache, f"insert({ids}, {pages})")
    ps = getattr(cache, "page_size", PS)
    if expect > 0 and got == expect * ps != expect:
        raise Mistake(
            f"insert({ids}, {pages}) returned {got!r}, expected {expect}: {why}. {got} is the number of cached "
            f"tokens, {expect} pages of {ps}; the cache manager reads the count as pages, so it would free "
            f"{ps} times too many of its pages as duplicates",
            INSERT_COUNTS_PAGES,
        )
    if got != expect:
        raise Mistake(
            f"insert({ids}, {pages}) returned {got!r}, expected {expect}: {why}. The count tells the "
            "cache manager which of its own pages are duplicates to free; a wrong count leaks pages or "
            "frees pages the tree still holds. Hint: what insert returns is the number of leading pages of the "
            "sequence that the tree had before this call (as match_prefix would have found them), not "
            "the number of pages added; only the part that was not cached is added, below the node where the "
            "cached prefix ends",
            INSERT_RETURNS,
        )


INSERT_COUNTS_PAGES = "insert's count is in pages, not tokens: the tokens of the cached prefix divided by page_size"
SLICED_BY_TOKENS = (
    "index `pages` by pages, not tokens: the part not yet cached begins at page k of the pages given, k = the "
    "tokens already cached // page_size, while the tokens begin at k * page_size"
)


MATCH_LAST_NODE = (
    "match_prefix returns the pages of the whole matched path, root to node, in order: collect each node's "
    "pages on the way down, not only the pages of the node where the match ends"
)


def _last_node_only(cache, ids: list[int], want: list[int], got) -> bool:
    """The answer returned the pages of the node it ended at, not those of the whole path."""
    node = _match(cache, ids)[0]
    return 0 < len(got) < len(want) and got == want[-len(got) :] and got == list(getattr(node, "pages", []))


def _check_locked_parent(cls, freed: list[int], locked: list[int], what: str) -> None:
    """`freed` holds the `locked` pages of a parent whose only child evict() took: name it when the
    answer does skip a locked leaf (A cached and locked whole: evict frees none of it), so only the
    parent left childless went in unchecked."""
    if not set(freed) & set(locked):
        return
    probe = _new(cls)
    probe.insert(list(A), list(A_PAGES))
    probe.lock(_match(probe, A)[0])
    if set(probe.evict(10)) & set(A_PAGES):
        return
    raise Mistake(
        f"{what}: evict freed the locked pages {locked} after their only child went. A locked leaf is skipped, "
        "but a parent left childless became a candidate without a look at its lock_ref",
        "a parent left childless joins the candidates only if its lock_ref is 0: check the lock there too, "
        "not only on the leaves evict starts with",
    )


def _expect_pages(cache, ids: list[int], want: list[int], why: str, hint: str = "") -> None:
    got = _pages(cache, ids)
    shared = aliased(cache, ids, got, want) if got != want else None
    if shared is not None:
        raise shared
    if got != want and _last_node_only(cache, ids, want, got):
        raise Mistake(
            f"match_prefix({ids}) returned pages {got}, expected {want}: {why}. {got} are the pages of the node "
            "where the match ends only; the nodes above it hold the rest of the prefix",
            MATCH_LAST_NODE,
        )
    misfiled = misfiled_hint(cache) if got != want else None
    if misfiled is not None:
        raise Mistake(f"match_prefix({ids}) returned pages {got}, expected {want}: {why}. {misfiled[0]}", misfiled[1])
    if got != want:
        ps = getattr(cache, "page_size", PS)
        raise Mistake(
            f"match_prefix({ids}) returned pages {got}, expected {want}: {why}" + (f". Hint: {hint}" if hint else ""),
            MATCH_KEEPS_LAST
            if drops_the_last_token(ids, want, got, ps) and _drops_the_last_token_alone(type(cache), ps)
            else MATCH_RETURNS,
        )


ROOT_LOCK = (
    "the root's lock_ref is 1 and stays 1 (invariant 3): a lock counts on the node locked and on each node "
    "above it below the root, never on the root itself"
)


def _expect_root(cache, after: str) -> None:
    """The root's lock_ref is 1 after every call (invariant 3), whatever was locked; read only if the
    class has the given `root` (no root: nothing to check)."""
    got = getattr(getattr(cache, "root", None), "lock_ref", 1)
    if got != 1:
        raise Mistake(
            f"after {after}, the root's lock_ref is {got!r}, expected 1 (invariant 3 of the contract)", ROOT_LOCK
        )


def _expect_cached(cache, want: set[int], after: str, inserted: Optional[tuple[list[int], int]] = None) -> None:
    """`inserted`: the pages of the last insert and k, how many of them the tree had already."""
    got = set(cache.cached_pages())
    lost, extra = sorted(want - got), sorted(got - want)
    if inserted is not None and lost:
        pages, k = inserted
        at = k * getattr(cache, "page_size", PS)  # the tokens cached: a slice of the tokens, not of the pages
        kept = [p for p in pages if p in got]
        if at != k and kept == pages[at:] and set(lost) <= set(pages[k:]):
            raise Mistake(
                f"after {after}, page(s) {lost} vanished from the tree (leaked): the new part below the cached "
                f"prefix holds {kept or 'none'} of the pages given, which is pages[{at}:], cut at the {at} tokens "
                f"cached; the pages not cached yet are pages[{k}:], after the {k} pages cached",
                SLICED_BY_TOKENS,
            )
    with hinted("the contract: what insert keeps, and that pages leave the tree only through evict"):
        _cached_as_expected(cache, want, after, lost, extra)


def _cached_as_expected(cache, want: set[int], after: str, lost: list[int], extra: list[int]) -> None:
    assert not lost, (
        f"after {after}, page(s) {lost} vanished from the tree: they are neither cached nor given back "
        "(leaked). Hint: pages leave the tree only through evict's return value"
    )
    assert not extra, (
        f"after {after}, the tree holds page(s) {extra} that it should not have. Hint: insert keeps the "
        "tree's own pages for the part it had already; the caller frees its copies of those"
    )
    assert cache.num_cached == len(want), (
        f"after {after}, num_cached is {cache.num_cached} but the tree holds {len(want)} distinct pages "
        "(a page stored twice?)"
    )


def _evict(cache, n: int, sequences: dict[tuple, list[list[int]]]) -> list[int]:
    """evict(n), then check that nothing was lost or double-owned and that only leaves went.

    `sequences` maps each inserted sequence to the pages of the nodes on its path, top down: a
    node goes whole, and a node may go only if every node below it on the path went too."""
    before = set(cache.cached_pages())
    can = getattr(cache, "num_evictable", None)
    probe = _copy(cache) if isinstance(can, int) and n > can > 0 else None
    freed = cache.evict(n)
    if probe is not None and freed == [] and _frees_some(probe, can):
        raise AssertionError(
            f"evict({n}) freed nothing, yet {can} page(s) were evictable and evict({can}) frees them. Hint: "
            f"{EVICT_WHAT_IT_CAN}"
        )
    check_leaves_under_a_lock(cache, n, freed)
    with hinted(EVICT_MAY_FREE):
        _evicted_whole_leaves(cache, n, sequences, before, freed)
    return freed


EVICT_WHAT_IT_CAN = (
    "when fewer than n pages are evictable, evict(n) frees every unlocked page it can and returns them "
    "(fewer than n), not nothing: the caller adds them to the free pages and may then have enough"
)


def _copy(cache):
    try:
        return copy.deepcopy(cache)
    except Exception:
        return None


def _frees_some(cache, n: int) -> bool:
    try:
        return bool(cache.evict(n))
    except Exception:
        return False


def _evicted_whole_leaves(cache, n: int, sequences: dict, before: set[int], freed) -> None:
    assert isinstance(freed, list), f"evict must return a list of page ids, not {type(freed).__name__}"
    after = set(cache.cached_pages())
    assert len(freed) == len(set(freed)), f"evict({n}) returned a page twice: {freed}"
    for seq, nodes in sequences.items():
        for pages in nodes:
            got = [p for p in pages if p in freed]
            if got and len(got) < len(pages) and not set(pages) & after:
                raise AssertionError(
                    f"evict({n}) removed the node holding pages {pages} but returned only {got}: the "
                    "others are now in neither the tree nor the free list (leaked). Hint: a node goes "
                    "whole: return all its pages"
                )
        gone = [any(p in freed for p in pages) for pages in nodes]
        if any(gone) and not all(gone[gone.index(True) :]):
            first = nodes[gone.index(True)][0]
            raise AssertionError(
                f"evict({n}) freed page {first} of the cached sequence {list(seq)} but not the pages after "
                "it: it removed a node that still has children. Hint: evict leaves only; a parent becomes "
                "a leaf once its last child is gone"
            )
    both = sorted(set(freed) & after)
    assert not both, (
        f"evict({n}) returned page(s) {both} but the tree still holds them: the allocator "
        "would hand them out while the tree still serves them"
    )
    lost = sorted(before - after - set(freed))
    assert not lost, (
        f"evict({n}) removed page(s) {lost} from the tree without returning them (leaked): "
        "return every page of every node you remove"
    )


# ---------------------------------------------------------------------------- with the cache manager
POOL_PAGES = 40  # a few requests' worth: evictions all the time
PLENTY = 4000  # more than a workload ever needs
MAX_LEN = 24


def _manager(cls, num_pages: int) -> CacheManager:
    pool = KVPool(1, num_pages, PS, 1, 1, torch.float32, "cpu")
    table = PageTable(8, pages_for(MAX_LEN + 8, PS), "cpu", fill=pool.dummy_page)
    mgr = CacheManager(pool, table, "radix")
    mgr.prefix_cache = cls(PS)
    return mgr


def _workload(seed: int, n: int = 120) -> list[tuple]:
    """Admit requests whose prompts share beginnings, compute them, finish or abort them."""
    rnd = random.Random(seed)
    stems = [[rnd.randrange(3) for _ in range(rnd.randrange(2, 12))] for _ in range(4)]
    ops = []
    for _ in range(n):
        kind = rnd.choice(["admit", "admit", "finish", "finish", "abort"])
        if kind == "admit":
            prompt = list(rnd.choice(stems)) + [rnd.randrange(3) for _ in range(rnd.randrange(1, 8))]
            ops.append(("admit", prompt[:MAX_LEN], rnd.randrange(1, 6)))
        else:
            ops.append((kind, rnd.randrange(8), 0))
    return ops


DONE = {
    "admit": "a request was admitted",
    "finish": "a request finished",
    "abort": "a request was aborted",
    "end": "the last requests finished and everything was evicted",
}


def _play(cls, ops: list[tuple], num_pages: int, states: Optional[list] = None) -> list[int]:
    """Run `ops` on a manager with `cls` as its prefix cache; returns each admission's prefix_len.
    With `states`, appends (operations done, sorted cached pages, evictable pages) every 20
    operations and before the final eviction."""
    mgr = _manager(cls, num_pages)
    live: list[Req] = []
    prefix_lens = []
    uid = 0
    for i, (op, a, b) in enumerate(ops + [("end", 0, 0)]):
        if states is not None and (op == "end" or i % 20 == 0):
            states.append((i, sorted(mgr.prefix_cache.cached_pages()), mgr.prefix_cache.num_evictable))
        try:
            if op == "end":
                for req in live:
                    mgr.release(req, cache_it=True)
                if mgr.prefix_cache.num_evictable != mgr.prefix_cache.num_cached:
                    born_locked = new_leaf_locked(cls, mgr.prefix_cache.page_size)
                    raise AssertionError(
                        "every request has finished, yet some cached pages are still locked. Hint: "
                        + (
                            born_locked
                            or "unlock must undo lock exactly, on the node that lock was given (even if "
                            "a split moved its upper part)"
                        )
                    )
                mgr.allocator.free(mgr.prefix_cache.evict(num_pages))
            else:
                uid = _play_one(mgr, live, prefix_lens, uid, op, a, b)
        except ValueError as e:
            if "freed twice" not in str(e):
                raise
            raise AssertionError(
                f"when {DONE[op]}, the cache manager freed a page twice ({e}): insert's count or evict's "
                "pages do not match what the tree really holds"
            ) from None
        try:
            mgr.check()
        except AssertionError as e:
            raise AssertionError(f"after {DONE[op]}, the KV pages do not add up: {e}") from None
    assert mgr.allocator.num_free == num_pages, (
        f"every request has finished and everything was evicted, but only {mgr.allocator.num_free} of "
        f"{num_pages} pages are free: pages leaked"
    )
    return prefix_lens


def _play_one(mgr: CacheManager, live: list[Req], prefix_lens: list[int], uid: int, op: str, a, b) -> int:
    """One operation of a workload; returns the next free uid."""
    if op != "admit":
        if live:
            req = live.pop(a % len(live))
            mgr.release(req, cache_it=(op == "finish"))
        return uid
    if len(live) == 8:  # every page-table row is taken
        return uid
    req = Req(uid, list(a), SamplingParams(max_tokens=b))
    mgr.admit(req)
    prefix_lens.append(req.prefix_len)
    need = pages_for(len(a) + b, PS) - mgr.held_pages(req)
    if need > mgr.num_available:  # what the scheduler's admission does: wait
        mgr.release(req, cache_it=False)
        return uid + 1
    try:
        mgr.reserve(req, len(a) + b)
    except OutOfPages:
        raise AssertionError(
            f"num_evictable said {mgr.prefix_cache.num_evictable} cached pages could be evicted, but "
            f"evict() did not give back enough for {need} pages. Hint: evict must be able to free every "
            "unlocked page (num_evictable counts them): skip locked leaves and keep going, and a parent "
            "left childless becomes a candidate"
        ) from None
    req.output_ids = [0] * b  # "computed": the prompt and all but the last output token
    req.cached_len = len(a) + b - 1
    live.append(req)
    return uid + 1


# ---------------------------------------------------------------------------- the real engine
SHARED = "One, two, three, four, five, six, seven, eight,"
ENGINE_REQUESTS = [
    # (uid, arrives before step, text, sampling params). Request 0 runs alone and leaves its pages
    # in the tree; then 1 (which leaves it inside the first edge: a split) and 2 (all of it) run
    # together and lock the shared part twice.
    (0, 1, SHARED, SamplingParams(max_tokens=3, ignore_eos=True)),
    (1, 5, "One, two, three, four, five, and more", SamplingParams(max_tokens=2, ignore_eos=True)),
    (2, 5, SHARED + " ten", SamplingParams(max_tokens=3, ignore_eos=True)),
]


def _run(cls):
    s = new_scheduler(cache="radix")
    if cls is not reference:
        s.cache.prefix_cache = cls(s.cache.page_size)
    steps = []
    for n in range(1, 60):
        for uid, step, text, params in ENGINE_REQUESTS:
            if step == n:
                s.add_request(uid, s.tokenizer.encode(text), params)
        if s.is_idle and n > 5:
            break
        rec = s.step()
        if rec is not None:
            steps.append((rec.phase, rec.items))
        s.cache.check()
    out = collect(s)
    return steps, out.tokens, s


def _reference_run():
    def compute():
        steps, tokens, _ = _run(reference)
        assert any(start > 0 for phase, items in steps if phase == "prefill" for _, start, _ in items), (
            "setup: expected a prefix hit"
        )
        return steps, tokens

    return remember("prefix_cache", compute)
