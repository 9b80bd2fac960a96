"""Generated scenes for exercise 6 and its stretch: a radix cache driven through many steps of the
calls the cache manager makes (`match_prefix`, `lock`, `unlock`, `insert`, `evict`), on token
sequences that share prefixes.

Where this sits in the course: the generated phase (grading/explore.py) of `prefix_cache` and
`prefix_cache_lfu`, after their hand-written cases. A scene is a page size (1, 2 or 3) and a list
of steps on sequences cut from a few stems, so that they share beginnings and part pages:

* `insert(ids, pages)` with fresh page ids, as a finished request hands them back (the pages of all
  of `ids` in whole pages, or one page fewer); the caller frees the first `k` it gets back (its
  duplicates), as the cache manager does, and the lowest free ids go out first, so pages that
  `evict` freed come back in later inserts (re-insertion after eviction, in recycled pages);
* `match_prefix(ids)` at any depth, whole pages or not, and, as a request's admission does, a
  `lock` of the node it returned, held over later steps (later calls may cut that node in two);
* `unlock` of one of the nodes locked and not yet unlocked;
* `evict(n)` with n from 0 to more than is evictable;
* at the end, every lock undone and everything evicted (for the LFU stretch, one `evict(1)` at a
  time, so that the whole eviction order shows; its scenes also match a prefix several times in a
  row, and half of them line up a prefix with hits, an insert that cuts it and a leaf elsewhere).

Before the drawn scenes, a few fixed ones (`FIXED`, `FIXED_LFU`) play what drawn steps rarely line
up: a parent left childless that competes with its own last use, or its own hits, against a leaf.

What is compared after each step: what the call returned (the pages of a match, the count of an
insert, the pages evict freed, as a sorted list: their order is free), then the cached pages,
`num_evictable` and `num_cached`. Many steps in one scene are what catch an answer whose state
outlives a node (a count kept by `id(node)`, which CPython hands to the next node made).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional

from hypothesis import strategies as st

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.explore import Difference, generated, made_by
from minisgl_edu.grading.feedback import is_student_file
from minisgl_edu.grading.prefix_cache.edge_overrun import overrun_hint
from minisgl_edu.grading.prefix_cache.exact_n import exact_n_hint
from minisgl_edu.grading.prefix_cache.lfu_evict_ancestors import docked_hint
from minisgl_edu.grading.prefix_cache.lfu_path_count import path_count_hint
from minisgl_edu.grading.prefix_cache.lfu_reference import (
    AGED_BY_EVICT,
    HITS_PER_NODE,
    LFU_BY_PAGE_ID,
    LFU_ORDER,
    SPLIT_IS_NO_USE,
    UNLOCK_COUNTS,
    HalvesOnEvict,
    HitsByEdge,
    SplitCountsAHit,
    TiesByPageId,
    UnlockCountsAHit,
)
from minisgl_edu.grading.prefix_cache.lfu_stale_map import stale_map_hint
from minisgl_edu.grading.prefix_cache.lru_mistakes import INSERT_CUTS, all_or_nothing, edge_left_whole
from minisgl_edu.grading.prefix_cache.node_up import match_hint
from minisgl_edu.grading.prefix_cache.orphan_leaf import orphan_hint
from minisgl_edu.grading.prefix_cache.root_leaf import root_leaf_hint
from minisgl_edu.grading.prefix_cache.takes_over import takes_over_hint
from minisgl_edu.grading.prefix_cache.tree import EVICT_WHAT_IT_CAN, MATCH_KEEPS_LAST, ROOT_LOCK, drops_the_last_token
from minisgl_edu.grading.prefix_cache.unlock_guard import guard_hint
from minisgl_edu.grading.prefix_cache.upper_lost import upper_lost_hint

MAX_STEPS = 12
PRELUDE = 3  # inserts before the steps
# the kinds of step, as often as they are drawn (interleaved: a shrunk scene's steps become the first)
KINDS = ["match", "evict", "insert", "match", "unlock", "evict", "match", "evict around", "insert", "unlock"]
FIRST_PAGE = 10  # page ids start here, so that a page id never reads as a token
# a loop that asks "enough freed?" only after freeing a leaf frees one even for 0
EVICT_ZERO = (
    "evict(0) asks for nothing, so it must free nothing: ask whether at least n pages are freed before "
    "freeing each leaf, not after, and for n = 0 the loop stops before the first"
)


@dataclass
class TreeScene:
    page_size: int
    # ("insert", ids, short) | ("match", ids, lock) | ("unlock", j) | ("evict", n or "num_evictable ± 1")
    steps: list[tuple]
    drain: bool = False  # at the end, evict(1) until nothing is left: the whole eviction order shows


@st.composite
def tree_scenes(draw: Any, drain: bool = False) -> TreeScene:
    ps = draw(st.sampled_from([1, 2, 2, 3]))
    # stems of 1 to 4 pages on two tokens: sequences cut from them share prefixes, part pages, part ways in an edge
    stems = draw(st.lists(st.lists(st.integers(1, 2), min_size=ps, max_size=4 * ps), min_size=2, max_size=3))

    @st.composite
    def ids(draw: Any) -> list[int]:
        stem = draw(st.sampled_from(stems))
        cut = len(stem) - draw(st.integers(0, len(stem)))  # drawn from the end: most keep much of it
        return stem[:cut] + draw(st.lists(st.integers(1, 3), max_size=ps + 2))

    insert = st.tuples(st.just("insert"), ids(), st.sampled_from([0, 0, 0, 1]))
    prelude = draw(st.lists(insert, min_size=2, max_size=PRELUDE))  # a tree to start from
    cached = [seq for _, seq, _ in prelude]

    @st.composite
    def again(draw: Any) -> list[int]:
        """A sequence of the prelude, cut (at any depth, in a page or not), or whole: a match that
        finds something, and counts hits."""
        seq = draw(st.sampled_from(cached))
        return seq[: len(seq) - draw(st.integers(0, len(seq)))]

    kinds = {
        "insert": insert,
        # most matches are admissions, which lock
        "match": st.tuples(st.just("match"), st.one_of(again(), ids()), st.sampled_from([True, False])),
        "unlock": st.tuples(st.just("unlock"), st.integers(0, 3)),
        "evict": st.tuples(st.just("evict"), st.sampled_from([1, 0, 1, 2, 3, 100])),
        # around what is evictable: all of it, one page short, and more than there is
        "evict around": st.tuples(
            st.just("evict"), st.sampled_from(["num_evictable - 1", "num_evictable", "num_evictable + 1"])
        ),
    }
    if not drain:
        step = st.sampled_from(KINDS).flatmap(lambda kind: kinds[kind])
        return TreeScene(ps, prelude + draw(st.lists(step, min_size=5, max_size=MAX_STEPS)))
    # the LFU stretch: a match made up to 3 times in a row (hits that add up, so counts differ by more
    # than one), and the whole eviction order read at the end
    burst = st.tuples(kinds["match"], st.integers(1, 3)).map(lambda m: [(*m[0][:2], False)] * (m[1] - 1) + [m[0]])
    moves = {kind: burst if kind == "match" else strategy.map(lambda one: [one]) for kind, strategy in kinds.items()}
    move = st.sampled_from(KINDS).flatmap(lambda kind: moves[kind])
    steps = [one for m in draw(st.lists(move, min_size=4, max_size=MAX_STEPS)) for one in m]
    return TreeScene(ps, prelude + steps[:MAX_STEPS], drain)


@st.composite
def hot_cut_scenes(draw: Any) -> TreeScene:
    """The LFU stretch: a prefix matched h times, then cut by an insert that parts from it inside its
    edge (or ends there), a leaf matched hc times elsewhere, and matches of the cut's upper part;
    the drain at the end shows whether both parts kept the h hits. Random steps rarely line these up."""
    ps = draw(st.sampled_from([1, 2, 2, 3]))
    a = draw(st.lists(st.integers(1, 2), min_size=2 * ps, max_size=4 * ps))
    a = a[: len(a) // ps * ps]
    cut = draw(st.integers(1, len(a) // ps - 1)) * ps
    other = [3 - t for t in a[cut : cut + ps]]  # a page that parts from a's at its first token
    w = a[:cut] + (other if draw(st.booleans()) else [])  # parts inside the edge, or ends there
    c = [3] * ps + draw(st.lists(st.integers(1, 2), max_size=2 * ps))
    h, hc, k = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(0, 2))
    hot = [("match", a, False)] * h
    cold = [("match", c, False)] * hc
    steps = [("insert", a, 0), ("insert", c, 0)] + (hot + cold if draw(st.booleans()) else cold + hot)
    steps += [("insert", w, 0)] + [("match", draw(st.sampled_from([w, a[:cut]])), False)] * k
    if k and draw(st.booleans()):  # a request holds the last match while an eviction runs
        steps[-1] = (*steps[-1][:2], True)
        steps.append(("evict", draw(st.sampled_from([1, 2, 100]))))
    return TreeScene(ps, steps, True)


# Situations the drawn scenes rarely line up, played first as they are: a parent left childless
# competes with its own last use (or, in the stretch, its own hits) against the other leaves.
FIXED = [
    # a match that ends inside an edge uses its upper part only: once the lower part goes, it is newer than [3, 3, 4, 4]
    TreeScene(
        2,
        [("insert", [5, 5, 6, 6, 7, 7], 0), ("insert", [3, 3, 4, 4], 0), ("match", [5, 5, 8, 8], False), ("evict", 3)],
    ),
    # a match uses every node of its path: the shared parent, left childless while [7, 7] was locked,
    # was used after [7, 7] was matched
    TreeScene(
        2,
        [
            ("insert", [1, 1, 2, 2], 0),
            ("insert", [1, 1, 3, 3], 0),
            ("insert", [7, 7], 0),
            ("match", [7, 7], True),
            ("match", [1, 1, 2, 2], False),
            ("evict", 2),
            ("unlock", 0),
            ("evict", 1),
        ],
    ),
    # a parent left childless goes in the same call, by its own last use, before a newer leaf
    TreeScene(2, [("insert", [1, 1, 2, 2], 0), ("insert", [1, 1, 2, 2, 3, 3], 0), ("insert", [5, 5], 0), ("evict", 2)]),
]
FIXED_LFU = [
    # a parent with 3 hits, left childless, competes with them against a leaf with 1
    TreeScene(
        2,
        [("insert", [1, 1], 0)]
        + [("match", [1, 1], False)] * 3
        + [("insert", [1, 1, 2, 2], 0), ("insert", [7, 7], 0), ("match", [7, 7], False), ("evict", 2)],
        drain=True,
    ),
    # a node evicted and made again in the same page starts at 0 hits
    TreeScene(
        2,
        [("insert", [1, 1], 0)]
        + [("match", [1, 1], False)] * 3
        + [("evict", 100), ("insert", [2, 2], 0), ("insert", [3, 3], 0), ("match", [3, 3], False)],
        drain=True,
    ),
    # a chain: the leaves below P go, then P (1 hit) competes with Q (3 hits) in the same call
    TreeScene(
        2,
        [
            ("insert", [1, 2, 3, 4, 5, 6, 7, 8], 0),
            ("match", [1, 2, 3, 4, 5, 6, 7, 8], False),
            ("insert", [1, 2, 3, 4, 9, 9], 0),
            ("insert", [11, 11, 12, 12], 0),
        ]
        + [("match", [11, 11, 12, 12], False)] * 3
        + [("evict", 5)],
        drain=True,
    ),
]


class _Caller:
    """The cache manager's side of the calls: the page ids it holds (the lowest go out first) and
    the nodes it locked."""

    def __init__(self) -> None:
        self.free = list(range(FIRST_PAGE, FIRST_PAGE + 400))
        self.locked: list[tuple[int, Any]] = []  # (the step that locked it, the node)

    def take(self, n: int) -> list[int]:
        pages, self.free = self.free[:n], self.free[n:]
        return pages

    def give(self, pages: list[int]) -> None:
        self.free = sorted(set(self.free) | set(pages))


def _pages(got: Any) -> Optional[list[int]]:
    if isinstance(got, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in got):
        return got
    return None


def play(cls: Any, scene: TreeScene, calls: Optional[list[str]] = None, upto: Optional[int] = None) -> Any:
    """Drive a `cls(page_size)` through the scene; with `calls`, write each call there as made;
    with `upto`, stop before that step and return the cache.
    An exception of the answer is the step's outcome, shown with the answer's line; the scene stops
    there (an earlier step's difference, if any, is still the first one reported)."""
    cache = cls(scene.page_size)
    me = _Caller()
    out: dict[str, Any] = {}
    say: Callable[[str], None] = calls.append if calls is not None else (lambda _: None)
    for i, step in enumerate(scene.steps):
        if i == upto:  # the hints look at the reference's tree before a step
            return cache
        label = f"step {i}"
        try:
            if not _play_step(cache, me, scene, i, step, out, say):
                return out
            _state(cache, out, label)
        except (NotImplementedError, Mistake):
            raise
        except Exception as e:
            out[f"{label}: what it returned"] = _raised(e)
            return out
    last = "evict(1) until it frees nothing" if scene.drain else "evict(1000)"
    say(f"at the end: unlock every node still locked, then {last}")
    try:
        for _, node in me.locked:
            cache.unlock(node)
        if scene.drain:
            out[DRAINED] = _drain(cache)
        else:
            got = cache.evict(1000)
            out["at the end: what evict(1000) returned"] = sorted(got) if _pages(got) is not None else got
        _state(cache, out, "at the end")
    except (NotImplementedError, Mistake):
        raise
    except Exception as e:
        out[DRAINED if scene.drain else "at the end: what evict(1000) returned"] = _raised(e)
    return out


DRAINED = "at the end: what each evict(1) returned, in turn"


def _drain(cache: Any) -> list:
    """evict(1) until it frees nothing: each call's pages (sorted), so the order of the leaves shows."""
    freed: list = []
    for _ in range(FIRST_PAGE + 400):  # more calls than there are pages: an answer that never stops
        got = cache.evict(1)
        if _pages(got) is None:
            return freed + [got]
        if not got:
            return freed
        freed.append(sorted(got))
    return freed


def _raised(e: Exception) -> str:
    mine = [f for f in traceback.extract_tb(e.__traceback__) if is_student_file(f.filename)]
    at = f" (line {mine[-1].lineno} of your {mine[-1].name})" if mine else ""
    return f"raised {type(e).__name__}: {e}{at}"


def _state(cache: Any, out: dict, label: str) -> None:
    out[f"{label}: cached pages after it"] = sorted(cache.cached_pages())
    out[f"{label}: num_evictable after it"] = cache.num_evictable
    out[f"{label}: num_cached after it"] = cache.num_cached
    out[f"{label}: root.lock_ref after it"] = getattr(getattr(cache, "root", None), "lock_ref", 1)  # 1 if no root


def _play_step(cache: Any, me: _Caller, scene: TreeScene, i: int, step: tuple, out: dict, say: Callable) -> bool:
    """One step of the scene; False when what came back ends the scene (a wrong type)."""
    op, *args = step
    field = f"step {i}: what it returned"
    if op == "insert":
        ids, short = args
        pages = me.take(max(0, len(ids) // scene.page_size - short))
        say(f"insert({ids}, {pages})")
        got = cache.insert(list(ids), list(pages))
        out[field] = got
        if not isinstance(got, int) or isinstance(got, bool):
            return False
        me.give(pages[: max(0, min(got, len(pages)))])  # the caller frees its duplicates
    elif op == "match":
        ids, lock = args
        say(f"node, pages = match_prefix({ids})" + ("; lock(node)" if lock else ""))
        got = cache.match_prefix(list(ids))
        if not (isinstance(got, tuple) and len(got) == 2 and _pages(got[1]) is not None):
            out[field] = got
            return False
        out[field] = got[1]
        if lock:
            cache.lock(got[0])
            me.locked.append((i, got[0]))
    elif op == "unlock":
        if not me.locked:
            say("unlock: nothing is locked, skipped")
            out[field] = "(skipped)"
            return True
        at, node = me.locked.pop(args[0] % len(me.locked))
        say(f"unlock(the node locked at step {at})")
        cache.unlock(node)
        out[field] = None
    else:
        n = args[0]
        if isinstance(n, str):  # "num_evictable + 1": read from the cache, as the manager does
            n = max(0, cache.num_evictable + {"num_evictable": 0, "num_evictable - 1": -1}.get(n, 1))
            say(f"evict({args[0]}), i.e. evict({n})")
        else:
            say(f"evict({n})")
        got = cache.evict(n)
        if _pages(got) is None:
            out[field] = got
            return False
        out[field] = sorted(got)
        me.give(got)
    return True


def shower(reference: Any, name: str) -> Callable[[TreeScene], str]:
    """`show` for a family: the calls as the reference's run made them (the page ids an insert gets
    come from what earlier evicts freed)."""

    def show(scene: TreeScene) -> str:
        calls: list[str] = []
        play(reference, scene, calls)
        lines = [f"  cache = {name}(page_size={scene.page_size}), then:"]
        lines += [f"  step {i}: {c}" for i, c in enumerate(calls[:-1])]
        lines.append(f"  {calls[-1]}")
        return "\n".join(lines)

    return show


# --- hints: each names the mistake its field shows ---------------------------------------------


def _step(scene: TreeScene, field: str) -> tuple:
    head = field.split(":")[0].split()
    if head[0] != "step":
        return ("end",)
    return scene.steps[int(head[1])]


def _locked_pages(scene: TreeScene, field: str, reference: Any) -> set[int]:
    """The pages of locked nodes in the reference's tree before the step of `field`."""
    head = field.split(":")[0].split()
    cache = play(reference, scene, upto=int(head[1]) if head[0] == "step" else len(scene.steps))
    if isinstance(cache, dict):  # the end: every lock is undone there
        return set()
    return {p for node in cache._nodes() if node.lock_ref > 0 for p in node.pages}


def returned_hint(lfu: bool, reference: Any) -> Callable[[TreeScene, Difference], str]:
    def hint(scene: TreeScene, diff: Difference) -> str:
        op = _step(scene, diff.field)
        want, got = diff.expected, diff.got
        ps = scene.page_size
        if op[0] == "insert":
            whole = max(0, len(op[1]) // ps - op[2])
            if isinstance(got, int) and got == whole - want:
                return "insert returns how many leading pages the tree had before the call, not how many it added"
            return (
                "insert returns k, the leading pages of this sequence that the tree had before the call (what "
                "match_prefix would have returned, counted); only the first len(pages) pages count"
            )
        if op[0] == "match":
            if drops_the_last_token(op[1], want, got, ps):
                return MATCH_KEEPS_LAST
            if isinstance(got, list) and isinstance(want, list) and len(got) > len(want):
                return (
                    "a page is shared only if all its page_size tokens match: compare whole pages, and ignore "
                    "the tokens past the last whole page"
                )
            return (
                "match_prefix returns the pages of the longest cached prefix in whole pages: go on down past "
                "a node whose whole edge matched, and cut an edge where the match ends inside it"
            )
        if op[0] == "unlock":
            return (
                "unlock undoes the lock taken on that node, even if a later call cut it in two meanwhile: "
                "lock_ref of every node up to the root, where both parts of a split kept it"
            )
        n = op[1] if op[0] == "evict" else 1000
        if isinstance(n, str):
            n = len(want) if isinstance(want, list) else 1
        if isinstance(got, str) and got.startswith("raised") and "of your unlock" in got:
            return (
                "your unlock raised as the last locks were undone: lock adds 1 to the node and to every node "
                "above it, up to the root, even to an ancestor already locked, and unlock takes 1 from each of them"
            )
        if isinstance(got, str) and got.startswith("raised"):
            return (
                "evict removes whole unlocked leaves (no children) and returns their pages; it raises "
                "nothing, also when fewer than n pages can go"
            )
        if isinstance(got, list) and isinstance(want, list):
            if n == 0 and got:
                return EVICT_ZERO
            if set(got) & _locked_pages(scene, diff.field, reference):
                return (
                    "a locked node (lock_ref > 0: a running request reads it) is never evicted, even when it is "
                    "the least recently used: skip it and go on with the unlocked leaves"
                )
            if not lfu and set(want) < set(got) and made_by(play, edge_left_whole(reference), reference, scene, diff):
                return INSERT_CUTS
            if set(want) < set(got):
                return "evict stops as soon as it has freed at least n pages: one node more is a cached prefix lost"
            if not got and want and made_by(play, all_or_nothing(reference), reference, scene, diff):
                return EVICT_WHAT_IT_CAN
            if set(got) < set(want):
                return (
                    "evict skips a locked leaf and goes on: a parent left childless (and unlocked) becomes a "
                    "candidate in the same call; it stops early only when nothing unlocked is left"
                )
            if len(got) != len(set(got)):
                return "evict returns each page it frees once"
            if lfu and made_by(play, SplitCountsAHit, reference, scene, diff):
                return SPLIT_IS_NO_USE
            if lfu and made_by(play, HitsByEdge, reference, scene, diff):
                return HITS_PER_NODE
            if lfu and made_by(play, TiesByPageId, reference, scene, diff):
                return LFU_BY_PAGE_ID
            if lfu and made_by(play, HalvesOnEvict, reference, scene, diff):
                return AGED_BY_EVICT
            if lfu:
                return LFU_ORDER
            return (
                "evict frees the unlocked leaf used longest ago first: match_prefix and insert use the nodes "
                "they pass or add (a split's upper part is on that path, the lower part keeps its last use)"
            )
        return "evict returns the list of the page ids it freed"

    return hint


def drained_hint(reference: Any) -> Callable[[TreeScene, Difference], str]:
    """The LFU stretch's last field: the order evict(1) frees the leaves in, one call at a time."""

    def hint(scene: TreeScene, diff: Difference) -> str:
        if made_by(play, SplitCountsAHit, reference, scene, diff):
            return SPLIT_IS_NO_USE
        if made_by(play, HitsByEdge, reference, scene, diff):
            return HITS_PER_NODE
        if made_by(play, TiesByPageId, reference, scene, diff):
            return LFU_BY_PAGE_ID
        if made_by(play, HalvesOnEvict, reference, scene, diff):
            return AGED_BY_EVICT
        return UNLOCK_COUNTS if made_by(play, UnlockCountsAHit, reference, scene, diff) else LFU_ORDER

    return hint


def cached_hint(scene: TreeScene, diff: Difference) -> str:
    op = _step(scene, diff.field)
    lost = sorted(set(diff.expected) - set(diff.got)) if isinstance(diff.got, list) else []
    if op[0] == "insert" and lost:
        return (
            f"page(s) {lost} left the tree in this insert: insert only adds, below the node where the cached "
            "prefix ends, and never replaces or drops a node (a node's children are told apart by their whole "
            "first page, page_size tokens, not by their first token)"
        )
    if op[0] == "insert":
        return (
            "insert keeps the tree's own pages for the first k pages and takes pages[k:] only: pages[:k] stay "
            "the caller's, who frees them"
        )
    if op[0] in ("evict", "end"):
        return "a node leaves the tree whole, and every page of it is in evict's return value"
    return "match_prefix, lock and unlock never change which pages are cached"


def evictable_hint(scene: TreeScene, diff: Difference) -> str:
    op = _step(scene, diff.field)
    if op[0] in ("match", "unlock", "end"):
        return (
            "lock adds one to lock_ref of every node from the node up to the root; unlock takes it off the "
            "same nodes (a node that a later call cut in two: both parts kept its lock_ref)"
        )
    return "num_evictable counts the pages of the nodes whose lock_ref is 0"


def tree_case(reference: Any, lfu: bool = False, examples: int = 200) -> Any:
    """The generated case of `prefix_cache` (lfu=False) or `prefix_cache_lfu`."""
    hints: dict[str, Any] = {}

    def named(hint: Callable) -> Callable:  # what a call returned, or raised, or the order evict freed in
        hint = docked_hint(play, reference, stale_map_hint(play, reference, hint))  # LFU: stale map, docked parents
        return guard_hint(play, reference, orphan_hint(play, reference, hint))  # two mistakes that raise

    returned = named(match_hint(play, reference, overrun_hint(play, reference, returned_hint(lfu, reference))))
    cached = takes_over_hint(play, reference, upper_lost_hint(play, reference, cached_hint))  # a split's lost part
    cached = root_leaf_hint(play, reference, cached)
    for label in [f"step {i}" for i in range(PRELUDE + MAX_STEPS)] + ["at the end"]:
        hints[f"{label}: what it returned"] = returned
        hints[f"{label}: cached pages after it"] = cached
        hints[f"{label}: num_evictable after it"] = evictable_hint
        hints[f"{label}: num_cached after it"] = "num_cached counts every page in the tree once"
        hints[f"{label}: root.lock_ref after it"] = ROOT_LOCK
    hints["at the end: what evict(1000) returned"] = named(returned_hint(lfu, reference))
    hints[DRAINED] = named(path_count_hint(play, reference, exact_n_hint(play, reference, drained_hint(reference))))
    return generated(
        ("stretch: " if lfu else "") + f"generated: {examples} runs of match, lock, insert and evict, "
        "the tree compared after each step",
        st.one_of(tree_scenes(drain=True), hot_cut_scenes()) if lfu else tree_scenes(),
        play,
        shower(reference, "LFURadixCache" if lfu else "RadixCache"),
        reference,
        hints,
        examples,
        hint="the whole contract, over many steps: what each call returns and what the tree holds after it",
        fixed=FIXED_LFU if lfu else FIXED,
    )
