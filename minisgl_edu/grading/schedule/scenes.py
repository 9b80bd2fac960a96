"""Generated scenes for exercise 5 and its stretch: a scheduler in a state the engine's own
scheduler led it to, then several steps decided by the answer.

Where this sits in the course: the generated phase (grading/explore.py) of `schedule` and
`schedule_lpm`. A scene is plain data (grading/scheduler_scenes.py): the scheduler's setup (the
radix or the naive cache, prefixes cached at the start, a small pool, a token budget, a limit on
admitted requests), requests arriving before given steps (prompts that share a family's prefix or
not, short and long runs, one clamped to the context), a number of warm-up steps that the
package's scheduler decides (so the answer starts from a real state: requests waiting with and
without a row, part-way through a chunked prefill, decoding, pages of finished requests in the
prefix cache), then the steps the answer decides. The scheduler runs without the model
(fixtures.modelless), so a scene takes about a millisecond.

What is compared, after each of the answer's decisions: the batch (phase, then each item's uid,
start and tokens), `scheduler.waiting`, which waiting requests hold a row, the pages each request
holds, the `cached_len` and `prefix_len` of the waiting ones, the free and evictable pages,
`cache.check()`, and that the engine could run the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from hypothesis import strategies as st

from minisgl_edu.core import Batch
from minisgl_edu.grading.explore import Difference, generated
from minisgl_edu.grading.harness import fail_fast_if_stub
from minisgl_edu.grading.schedule.checks import MOVED_HINT, hide_engine_answer
from minisgl_edu.grading.schedule.lpm_edges import DEEPEST_EDGE
from minisgl_edu.grading.schedule.lpm_fraction import fraction_hint
from minisgl_edu.grading.schedule.release_watch import RELEASE_HINT, RELEASE_READ, ReleaseWatch
from minisgl_edu.grading.scheduler_scenes import (
    PAGE_SIZE,
    POOL,
    ReqSpec,
    SceneHints,
    Setup,
    arrive,
    build,
    consistent,
    items_of,
    request_specs,
    setups,
    show_items,
)
from minisgl_edu.kvcache import pages_for
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.scheduler import schedule_next_batch as package_schedule

LPM_MAX_WAITING = 8  # the stretch's threshold (schedule/lpm.py)
CONTEXT = 1024  # the grading engine's max_seq_len: max_tokens is clamped to it


@dataclass
class ScheduleScene:
    setup: Setup
    requests: list[ReqSpec]
    warmup: int  # steps the package's scheduler decides first
    decisions: int  # then the answer decides this many


@st.composite
def schedule_scenes(draw: Any, lpm: bool = False) -> ScheduleScene:
    # lpm: the whole pool, so that no eviction depends on how often the answer calls cache.match
    # (a match refreshes the matched pages' place in the eviction order)
    # lpm: small budgets, so that the request it chose first is often cut part-way through its prompt
    setup = draw(setups(budgets=(1, 16) if lpm else (1, 40), pressure=False))
    # lpm: often more requests than LPM_MAX_WAITING, or exactly as many
    n = draw(st.sampled_from([2, 4, 6, 8, 8, 9, 9, 10, 10, 10])) if lpm else draw(st.integers(1, 6))
    specs = draw(request_specs(n, arrive_by=2 if lpm else 3, long_runs=not lpm))
    if not lpm and setup.cache == "radix" and draw(st.integers(0, 3)):
        # A pool that fits the first k requests' whole runs exactly, or misses by a page, or has one
        # to spare: admission decides at its margin.
        finals = [pages_for(len(r.prompt()) + min(r.max_tokens, CONTEXT - len(r.prompt())), PAGE_SIZE) for r in specs]
        finals = [f - _shared_again(r, specs, setup) for f, r in zip(finals, specs)]  # a shared prefix counts once
        finals = [f for _, f in sorted(zip([(r.arrive, r.uid) for r in specs], finals))]
        k, delta = draw(st.integers(1, n)), draw(st.sampled_from([-1, 0, 0, 1]))
        least = max(max(finals), sum(p for _, p in setup.cached) + 1)
        setup = replace(setup, spare=min(max(sum(finals[:k]) + delta, least), POOL))
    return ScheduleScene(setup, specs, draw(st.integers(0, 6)), draw(st.integers(1, 6)))


def _shared_again(spec: ReqSpec, specs: list[ReqSpec], setup: Setup) -> int:
    """The cached prefix pages `spec` shares with a request that arrived before it (counted there)."""
    cached = dict(setup.cached)
    if spec.family not in cached:
        return 0

    def hit(r: ReqSpec) -> int:
        return min(cached[spec.family], r.shared // PAGE_SIZE, (len(r.prompt()) - 1) // PAGE_SIZE)

    before = [hit(r) for r in specs if r.family == spec.family and (r.arrive, r.uid) < (spec.arrive, spec.uid)]
    return min(hit(spec), max(before, default=0))


def show(scene: ScheduleScene) -> str:
    lines = [scene.setup.describe()]
    lines += [f"  request {spec.describe()}" for spec in scene.requests]
    w = scene.warmup
    if w:
        lines.append(f"  step{'s 1 to' if w > 1 else ''} {w}: the engine's own scheduler decides")
    lines.append(f"  steps {w + 1} to {w + scene.decisions}: your function decides (each batch then runs)")
    return "\n".join(lines)


class Decision:
    """A batch as the failure shows it, with the state it was decided in (for the hint only: two
    decisions are equal when their batches are)."""

    def __init__(self, items: Any, context: dict):
        self.items, self.context = items, context

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and self.items == other.items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return show_items(self.items)


def context(s: Scheduler) -> dict:
    """What the hint of a different batch needs to know about the state it was decided in."""
    cache = s.cache
    waiting = []
    for r in s.waiting:
        pages = len(cache.match(r)[1]) if r.table_idx < 0 else cache.held_pages(r)
        need = max(pages_for(len(r.input_ids) + r.max_new_tokens, cache.page_size) - pages, 0)
        waiting.append(
            {
                "uid": r.uid,
                "admitted": r.table_idx >= 0,
                "cached_pages": pages,
                "remaining": r.remaining_prompt,
                "prompt": len(r.input_ids),
                "need": need,
                "clamped": r.sampling_params.max_tokens > r.max_new_tokens,
            }
        )
    for r, w in zip(s.waiting, waiting):  # after every match above: the tree is split as the answer sees it
        handle = cache.match(r)[0] if r.table_idx < 0 else None
        w["edge_pages"] = len(getattr(handle, "key", ())) // cache.page_size
    admitted = s.running + [r for r in s.waiting if r.table_idx >= 0]
    return {
        "budget": s.max_prefill_tokens,
        "max_running": s.max_running,
        "admitted": len(admitted),
        "live": len(s.reqs),
        "available": cache.num_available,
        "free": cache.num_free,
        "outstanding": s.outstanding_pages(admitted),
        "outstanding_running": s.outstanding_pages(s.running),
        "clamped": any(r.sampling_params.max_tokens > r.max_new_tokens for r in admitted),
        "waiting": waiting,
    }


def _engine(run: Callable[[], Any]) -> str:
    try:
        run()
    except Exception as e:
        return f"crashed: {type(e).__name__}: {e}"
    return "ran"


def play(fn: Any, scene: ScheduleScene) -> dict:
    s = build(scene.setup)
    arrive(s, scene.requests, 0)
    for n in range(1, scene.warmup + 1):
        s.step()
        arrive(s, scene.requests, n)
    s.schedule_fn = fn
    if fn is not package_schedule:
        hide_engine_answer(s)  # the answer writes the decision itself
    out: dict = {}
    for k in range(1, scene.decisions + 1):
        label = f"step {scene.warmup + k}"
        ctx = context(s)
        with ReleaseWatch(s) as watch:
            batch = s._schedule_next_batch()  # the answer's code
        if batch is not None and not isinstance(batch, Batch):
            out[f"{label}: the batch"] = f"a {type(batch).__name__}, not a Batch"
            return out
        out[f"{label}: the batch"] = Decision(items_of(batch), ctx)
        out[f"{label}: {RELEASE_READ}"] = watch.seen()
        out[f"{label}: scheduler.running"] = [r.uid for r in s.running]
        out[f"{label}: scheduler.waiting"] = [r.uid for r in s.waiting]
        out[f"{label}: waiting requests that hold a row"] = [r.uid for r in s.waiting if r.table_idx >= 0]
        out[f"{label}: pages each request holds"] = {u: s.cache.held_pages(r) for u, r in sorted(s.reqs.items())}
        out[f"{label}: cached_len and prefix_len of the waiting requests"] = {
            r.uid: (r.cached_len, r.prefix_len) for r in s.waiting
        }
        out[f"{label}: free and evictable pages"] = (s.cache.num_free, s.cache.prefix_cache.num_evictable)
        out[f"{label}: cache.check()"] = consistent(s)
        ran = _engine(lambda: batch is not None and s.run_batch(batch))
        out[f"{label}: the engine ran the batch"] = ran
        if ran != "ran":
            return out
        arrive(s, scene.requests, scene.warmup + k)
    return out


# ------------------------------------------------------------------------------- hints
NOTHING = "when nothing can run, return None: never a batch without items"
BUDGET = "at most scheduler.max_prefill_tokens prompt tokens in one prefill batch"
FIT = (
    "admission: every admitted request's whole run, pages_for(len(req.input_ids) + req.max_new_tokens) "
    "minus the pages it holds (its cached prefix included), summed, must be <= cache.num_available "
    "(free plus evictable cached pages); equal fits"
)
CHUNK = (
    "each item starts at req.cached_len; every item but the last covers its request's whole remaining "
    "prompt, and the last takes what is left of the budget (a chunk may be one token)"
)
MAX_RUNNING = (
    "at most scheduler.max_running = {n} requests admitted at once, running or waiting with a row ({admitted} "
    "are now): count them all, not only the requests of this batch"
)
ONE_MORE = (
    "scheduler.max_running = {n} and {admitted} requests were admitted: one more may be admitted, refuse only when "
    "len(admitted) >= scheduler.max_running (not when the admitted requests plus the new one reach it)"
)
DECODE = "a decode batch: one item per request of scheduler.running, in that order, at position req.total_len - 1"
FCFS = "in queue order: a request part-way through its prompt first, then the others as they arrived"
LPM = (
    "requests not yet admitted go by the pages scheduler.cache.match(req) returns, most first, ties in "
    "arrival order; a request part-way through its prompt first; arrival order when more than "
    "LPM_MAX_WAITING requests wait"
)


def _order_hint(ctx: dict, got: list[int], want: list[int], lpm: bool) -> str:
    """What the order of the answer's prefill items shows, against the reference's."""
    info = {w["uid"]: w for w in ctx["waiting"]}
    arrival = [w["uid"] for w in ctx["waiting"]]
    if info[want[0]]["admitted"] and not info[got[0]]["admitted"]:
        return "a request part-way through its prompt (it holds a row, req.table_idx >= 0) goes first" + (
            ": it need not be the head of scheduler.waiting, find it there" if lpm else ""
        )
    if not lpm:
        return FCFS
    if len(arrival) > LPM_MAX_WAITING:
        started = ", the one part-way through its prompt too" if any(w["admitted"] for w in ctx["waiting"]) else ""
        return (
            f"more than LPM_MAX_WAITING = {LPM_MAX_WAITING} requests wait (all of scheduler.waiting{started}): "
            "arrival order"
        )
    new = [u for u in got if not info[u]["admitted"]]
    first = next((u for u in want if not info[u]["admitted"]), None)
    if new and first is not None:
        mine, theirs = info[new[0]]["cached_pages"], info[first]["cached_pages"]
        at_threshold = ctx["live"] > LPM_MAX_WAITING or len(arrival) == LPM_MAX_WAITING
        if mine < theirs and arrival.index(new[0]) < arrival.index(first) and at_threshold:
            return (
                f"at most LPM_MAX_WAITING = {LPM_MAX_WAITING} requests wait (scheduler.waiting, not the running "
                "ones), so sort by cached pages: " + LPM
            )
        by_edge = sorted((u for u in arrival if not info[u]["admitted"]), key=lambda u: -info[u]["edge_pages"])
        if mine < theirs and new == by_edge[: len(new)]:
            return DEEPEST_EDGE[1] + ": " + LPM
        fraction = fraction_hint(new, first, [u for u in arrival if not info[u]["admitted"]], info)
        if fraction:
            return fraction
        if mine < theirs:
            return "most cached pages first (the pages scheduler.cache.match(req) returns), not fewest: " + LPM
        if mine == theirs:
            return (
                "requests with as many cached pages (whole pages, as scheduler.cache.match(req) returns them, not "
                "tokens in common) keep their arrival order (one stable sort, most pages first: not by uid, and not "
                "a sort reversed afterwards): " + LPM
            )
    return LPM


def _fits_hint(ctx: dict, req: dict, n: int, got: Any) -> str:
    """The request the reference admits (its chunk of `n` tokens) and the answer does not."""
    total = ctx["outstanding"] + req["need"]
    if got is not None and got[0] == "decode":
        return "prefill first: a decode batch only when no prompt token can run (" + FIT + ")"
    parts = []  # each way of counting that would have kept it out
    admitted = {w["uid"] for w in ctx["waiting"] if w["admitted"]}
    before = ctx["admitted"] + len([u for u, _, _ in (got[1] if got is not None else []) if u not in admitted])
    if before + 1 == ctx["max_running"]:  # the request that reaches the limit exactly
        parts.append(ONE_MORE.format(n=ctx["max_running"], admitted=before))
    if total == ctx["available"]:
        parts.append("a request whose sum equals cache.num_available fits: compare with <=, not <")
    if ctx["clamped"] or req.get("clamped"):
        parts.append(
            "a request's max_tokens here is clamped to the context: count len(req.input_ids) + req.max_new_tokens, "
            "not req.sampling_params.max_tokens"
        )
    if ctx["free"] < total <= ctx["available"]:
        parts.append(
            "cached pages no running request uses are available too (cache.reserve evicts them): compare with "
            "cache.num_available, free plus evictable pages, not with the free pages alone"
        )
    if n < PAGE_SIZE:
        parts.append("a chunk may be as small as one token and need not fill a page")
    return "; ".join(parts) if parts else "prefill first, and the next request fits: " + FIT


def _over_hint(ctx: dict, info: dict, items: list, extra: int, lpm: bool) -> str:
    """The answer admits `extra` after the reference's `items`, where the reference stops: which count
    would have let it in (before `extra`, the items' chunks reserved `taken` pages)."""
    considered = [w["uid"] for w in ctx["waiting"] if w["admitted"]]
    new = [w for w in ctx["waiting"] if not w["admitted"]]
    if lpm and len(ctx["waiting"]) <= LPM_MAX_WAITING:
        new.sort(key=lambda w: -w["cached_pages"])
    order = considered + [w["uid"] for w in new]
    ran = {u for u, _, _ in items}
    if extra != next(u for u in order if u not in ran):
        return "nobody overtakes the first request that does not fit: stop there. " + (LPM if lpm else FCFS)
    taken = sum(max(pages_for(st + n, PAGE_SIZE) - info[u]["cached_pages"], 0) for u, st, n in items)
    total = ctx["outstanding"] + sum(info[u]["need"] for u, _, _ in items if not info[u]["admitted"])
    total += info[extra]["need"]
    without_waiting = ctx["outstanding_running"] + info[extra]["need"] <= ctx["available"] - taken
    stale = total - taken <= ctx["available"]
    waiting = (
        "count the waiting requests that hold a row too (part-way through a chunked prefill, or admitted "
        "earlier in this batch): they are admitted, and their whole runs may still take pages"
    )
    again = (
        "read cache.num_available again before each admission: the chunks reserved for the requests before it "
        "in this batch took pages from it"
    )
    if without_waiting and stale:
        return f"{waiting}; and {again}"
    if without_waiting:
        return waiting
    if stale:
        return again
    return "it does not fit: " + FIT


def _none_hint(ctx: dict, info: dict, got: Any) -> str:
    """Nothing can run, and the answer prefills: which count let its first new request in."""
    new = [u for u, _, _ in got[1] if not info[u]["admitted"]] if got is not None and got[0] == "prefill" else []
    if new:
        if ctx["admitted"] + len(new) > ctx["max_running"]:
            return MAX_RUNNING.format(n=ctx["max_running"], admitted=ctx["admitted"])
        x = info[new[0]]
        if x["cached_pages"] and ctx["outstanding"] + x["need"] - x["cached_pages"] <= ctx["available"]:
            return (
                "count a request's cached prefix once, after cache.admit(req): it then holds those pages, so do not "
                "subtract the pages of cache.match again, and read cache.num_available after admit (admitting "
                "locks the prefix: those pages are no longer available)"
            )
    return "nothing can run (nobody waiting fits, nothing decodes): return None. " + FIT


def _running_hint(scene: Any, diff: Difference) -> str:
    if isinstance(diff.got, list) and set(diff.got) - set(diff.expected):
        return MOVED_HINT
    return "the decision moves no request out of scheduler.running: the engine does that when a request finishes"


def _waiting_hint(scene: Any, diff: Difference) -> str:
    if isinstance(diff.got, list) and set(diff.expected) - set(diff.got):
        return (
            "a request that does not fit yet keeps waiting in scheduler.waiting (it fits once others finish): "
            "add_request has already rejected every prompt that could never fit"
        )
    return "leave scheduler.waiting in arrival order: change only the order you consider it in"


def _batch_hint(lpm: bool) -> Callable[[Any, Difference], str]:
    def hint(scene: Any, diff: Difference) -> str:
        want, got = diff.expected, diff.got
        if not isinstance(got, Decision):
            return "return a Batch (Batch('prefill', items) or Batch('decode', items)) or None"
        ctx, e, g = want.context, want.items, got.items
        info = {w["uid"]: w for w in ctx["waiting"]}
        if g is not None and not g[1]:
            return NOTHING
        if g is not None and g[0] == "prefill" and sum(n for _, _, n in g[1]) > ctx["budget"]:
            return BUDGET
        if e is None:
            return _none_hint(ctx, info, g)
        ew = [u for u, _, _ in e[1]]
        gw = [u for u, _, _ in g[1]] if g is not None and g[0] == "prefill" else []
        if e[0] == "prefill":
            missing = [it for it in e[1] if it[0] not in gw]
            if missing and gw == ew[: len(gw)]:
                u, _, n = missing[0]
                if info[u]["admitted"]:
                    where = " (with longest prefix match it need not be the head of scheduler.waiting)" if lpm else ""
                    return (
                        f"a request part-way through its prompt (req.table_idx >= 0) continues first{where}: " + CHUNK
                    )
                if n < info[u]["remaining"]:
                    return "a prompt longer than what is left of the budget is cut (chunked prefill): " + CHUNK
                return _fits_hint(ctx, info[u], n, g)
        if g is None:
            return DECODE
        if e[0] != g[0]:
            if e[0] == "decode":
                if ctx["admitted"] >= ctx["max_running"]:
                    return MAX_RUNNING.format(n=ctx["max_running"], admitted=ctx["admitted"])
                return "nobody waiting can run this step: " + FIT
            return "prefill first: a decode batch only when no prompt token can run (" + FIT + ")"
        if e[0] == "decode":
            return DECODE
        if gw == ew:
            if [st for _, st, _ in g[1]] != [st for _, st, _ in e[1]]:
                return (
                    "an item starts at req.cached_len: after the cached prefix cache.admit gave it, or its last chunk"
                )
            return CHUNK
        if sorted(gw) == sorted(ew) or (lpm and gw[:1] != ew[:1]):
            return _order_hint(ctx, gw, ew, lpm)
        if ew == gw[: len(ew)]:
            if sum(n for _, _, n in e[1]) >= ctx["budget"]:
                return "stop once the budget is used up: " + BUDGET
            if ctx["admitted"] + len([u for u in gw if not info[u]["admitted"]]) > ctx["max_running"]:
                return MAX_RUNNING.format(n=ctx["max_running"], admitted=ctx["admitted"])
            return _over_hint(ctx, info, e[1], gw[len(ew)], lpm)
        if lpm and gw and ew:
            return _order_hint(ctx, gw, ew, lpm)
        return "nobody overtakes the first request that does not fit: stop there. " + FCFS

    return hint


def _rows(scene: Any, diff: Difference) -> str:
    if isinstance(diff.got, list) and set(diff.got) - set(diff.expected):
        return (
            "a request that is not in the batch (it does not fit, or the budget ran out) is left as it was: "
            "undo its admission with scheduler.cache.release(req, cache_it=False), or admit only who runs"
        )
    return "admit (cache.admit) every request you put in the batch"


def _pages(scene: Any, diff: Difference) -> str:
    more = [u for u in diff.expected if isinstance(diff.got, dict) and diff.got.get(u, 0) > diff.expected[u]]
    if more:
        return (
            f"request {more[0]} holds pages it does not need yet: reserve up to each item's end, "
            "scheduler.cache.reserve(req, start + num_tokens), and no more (a decode item: req.total_len)"
        )
    return "before the engine writes there: scheduler.cache.reserve(req, start + num_tokens) for every item"


def hints(lpm: bool) -> SceneHints:
    return SceneHints(
        {
            "the batch": _batch_hint(lpm),
            RELEASE_READ: RELEASE_HINT,
            "scheduler.running": _running_hint,
            "scheduler.waiting": _waiting_hint,
            "waiting requests that hold a row": _rows,
            "pages each request holds": _pages,
            "cached_len and prefix_len of the waiting requests": (
                "a request that is not admitted leaves no trace: after release(req, cache_it=False), set "
                "req.cached_len = req.prefix_len = 0 (cache.admit had set them to its cached prefix)"
            ),
            "free and evictable pages": "reserve exactly the pages of each item's end; undo an admission that does not fit",
            "cache.check()": "every page is free, in a row, or in the prefix cache, exactly once",
            "the engine ran the batch": "the batch must be one the engine can run: " + CHUNK,
        }
    )


def schedule_case(reference: Any, lpm: bool = False, examples: int = 250) -> Any:
    """The generated case of `schedule` (lpm=False) or `schedule_lpm`."""
    case = generated(
        ("stretch: " if lpm else "") + f"generated: {examples} scheduler states, several steps each",
        schedule_scenes(lpm),
        play,
        show,
        reference,
        hints(lpm),
        examples,
        hint="states from a real run: waiting, part-way through a prompt, decoding, cached prefixes, a small pool",
        raised_hint="your function raised: read the state it was given in the scene above",
    )
    search = case.run

    def run(impl: Any) -> None:
        fail_fast_if_stub(impl)  # an untouched stub fails before the engine is loaded
        search(impl)

    return replace(case, run=run)  # the same case (its limit too), the stub checked first
