"""Generated scenes for exercise 2 and its stretch: a scheduler running requests, aborts at any
moment among its steps, then several steps more.

Where this sits in the course: the generated phase (grading/explore.py) of `abort` and
`abort_to_cache`. A scene is plain data (grading/scheduler_scenes.py): the scheduler's setup (the
radix or the naive cache, prefixes cached at the start, a small pool, a token budget, a limit on
admitted requests), the normal or the overlap loop, a few requests (prompts that share a family's
prefix or not, arriving before given steps), and a list of operations: a step, an abort between
two steps, or an abort between `schedule()` and `run_batch()`. An abort may name a request in any
state (waiting with or without a row, part-way through a chunked prefill, decoding, in a batch in
flight, finished) or a uid never seen, and the same uid may be aborted twice. The scheduler runs
without the model (fixtures.modelless), so a scene takes about a millisecond.

What is compared, after each abort: what it returned, the messages sent to the detokenizer, the
live, waiting and running uids, the request's status, where each page of its row went (free, the
prefix cache, still its row while a batch is in flight), any of them the cache files under other
tokens than the request's own from its first, its row, the free, cached and evictable
pages, the releases waiting for a batch and `cache.check()`; after each later step: that the
engine ran, the batch and the messages; at the end: the pages, the rows and what a new request
that starts with the aborted request's tokens finds in the prefix cache.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, Callable

from hypothesis import strategies as st

from minisgl_edu.core import Req
from minisgl_edu.grading.abort.cache_checks import FILED_ANYWHERE, misfiled
from minisgl_edu.grading.abort.checks import returns
from minisgl_edu.grading.abort.last_chunk_cached import or_last_chunk
from minisgl_edu.grading.abort.naive_handle import or_by_the_handle
from minisgl_edu.grading.abort.probes import (
    DROPS_A_COMPUTED_TOKEN,
    OUTPUT_EMPTIED,
    PROMPT_ONLY,
    ROW_ZERO,
    caches_the_prompt_only,
    drops_a_computed_token,
    empties_the_output,
    skips_row_zero,
)
from minisgl_edu.grading.abort.release_seen import aborting, or_fields_changed, watch
from minisgl_edu.grading.abort.rounded_len import or_rounded_up
from minisgl_edu.grading.abort.scene_messages import messages_hint
from minisgl_edu.grading.abort.status_kind import shown, status_hint
from minisgl_edu.grading.abort.uid_zero import or_uid_zero
from minisgl_edu.grading.abort.unknown_uid import NOT_LIVE
from minisgl_edu.grading.explore import Difference, generated, made_by
from minisgl_edu.grading.fixtures import BALLAST_TOKEN, token_ids
from minisgl_edu.grading.harness import fail_fast_if_stub
from minisgl_edu.grading.scheduler_scenes import (
    ReqSpec,
    SceneHints,
    Setup,
    arrive,
    build,
    consistent,
    items_of,
    request_specs,
    setups,
)
from minisgl_edu.scheduler import Scheduler
from minisgl_edu.scheduler.abort import abort_request

UNKNOWN = 99  # a uid no request of a scene has
FOLLOW_UP = 77
STEP, ABORT, TWICE, SCHEDULED = "step", "abort", "abort twice", "abort after schedule()"


@dataclass
class AbortScene:
    setup: Setup
    overlap: bool  # the overlap loop (overlap_step: a batch in flight between steps)
    requests: list[ReqSpec]
    # (STEP, n: that many steps), (ABORT, uid), (TWICE, uid: aborted, then again) or (SCHEDULED, uid)
    ops: list[tuple[str, int]]
    after: int  # steps after the last operation


@st.composite
def abort_scenes(draw: Any) -> AbortScene:
    setup = draw(setups(budgets=(2, 20)))
    overlap = draw(st.booleans())
    n = draw(st.integers(1, 4))
    specs = draw(request_specs(n, setup.spare, arrive_by=3))
    uids = st.sampled_from(list(range(n)) * 3 + [UNKNOWN])  # mostly a request of the scene
    kinds = [STEP, STEP, ABORT, TWICE] + ([] if overlap else [SCHEDULED, SCHEDULED])
    drawn = draw(st.lists(st.tuples(st.sampled_from(kinds), uids, st.integers(1, 8)), max_size=8))
    ops = [(k, n if k == STEP else u) for k, u, n in drawn]
    if all(kind == STEP for kind, _ in ops):
        ops.append((ABORT, draw(uids)))
    return AbortScene(setup, overlap, specs, ops, draw(st.integers(0, 4)))


def show(scene: AbortScene) -> str:
    lines = [scene.setup.describe(), f"  the {'overlap' if scene.overlap else 'normal'} loop"]
    lines += [f"  request {spec.describe()}" for spec in scene.requests]
    steps = 0
    for kind, uid in scene.ops:
        if kind == STEP:
            first, steps = steps + 1, steps + uid
            lines.append(f"  step {first}" if uid == 1 else f"  steps {first} to {steps}")
            continue
        who = f"uid {uid}" + (" (never seen)" if uid == UNKNOWN else "")
        if kind == SCHEDULED:
            steps += 1
            lines.append(f"  step {steps}: schedule(), then abort {who}, then run_batch()")
        else:
            for _ in range(2 if kind == TWICE else 1):
                lines.append(f"  abort {who}" + (" (its batch may be in flight)" if scene.overlap else ""))
    if scene.after:
        lines.append(f"  then {scene.after} more step(s)")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- observing
def messages(s: Scheduler) -> list[tuple]:
    # stop as sent when it is no list (None, a string): shown as it is, not a TypeError of the grader's
    return [(m.uid, m.next_token, m.finished, m.finish_reason, _listed(m.stop)) for m in s.io.drain()]


def _listed(stop: Any) -> Any:
    return list(stop) if isinstance(stop, (list, tuple)) else stop


def _row_owners(s: Scheduler) -> dict[int, int]:
    """page -> uid of the row that holds it."""
    cache, owners = s.cache, {}
    for row in cache.page_table.used_rows():
        for p in cache.page_table.pages[row]:
            owners[p] = cache.uid_of_row.get(row, -1)
    return owners


def where(s: Scheduler, pages: list[int], uid: int) -> dict[int, str]:
    cache, cached, owners = s.cache, s.cache.prefix_cache.cached_pages(), _row_owners(s)
    out = {}
    for p in pages:
        if p in cached:
            out[p] = "in the prefix cache" + (" and free" if cache.allocator.is_free(p) else "")
        elif cache.allocator.is_free(p):
            out[p] = "free"
        elif p in owners:
            out[p] = "still in its row" if owners[p] == uid else f"in the row of uid {owners[p]}"
        else:
            out[p] = "lost (neither free, cached nor in a row)"
    return out


def ballast_pages(s: Scheduler) -> set[int]:
    tree, n = s.cache.prefix_cache, s.cache.num_pages * s.cache.page_size
    return set(tree.match_prefix([BALLAST_TOKEN + i for i in range(n)])[1])


def _cached(s: Scheduler, ballast: set[int]) -> list[int]:
    """The prefix cache's pages, less the ballast."""
    return sorted(s.cache.prefix_cache.cached_pages() - ballast)


def _observe_abort(s: Scheduler, out: dict, label: str, uid: int, ballast: set[int]) -> list[int]:
    """Abort `uid` (the answer's code) and record what it did; returns the request's ids (or [])."""
    req: Req = s.reqs.get(uid)
    row_idx = req.table_idx if req is not None else -1
    row = list(s.cache.page_table.pages[row_idx]) if row_idx >= 0 else []
    ids = list(req.all_ids) if req is not None else []
    s.io.drain()
    with returns(), aborting(s, req):
        out[f"{label}: returned"] = s.abort(uid)
    out[f"{label}: messages to the detokenizer"] = messages(s)
    out[f"{label}: scheduler.reqs"] = sorted(s.reqs)
    out[f"{label}: scheduler.waiting"] = [r.uid for r in s.waiting]
    out[f"{label}: scheduler.running"] = [r.uid for r in s.running]
    out[f"{label}: its status"] = (shown(req.status), req.finish_reason) if req is not None else "no such request"
    out[f"{label}: where the pages of its row are"] = where(s, row, uid)
    out[f"{label}: pages of its row the prefix cache files under other tokens"] = misfiled(s, row, ids)
    used = s.cache.page_table.used_rows()
    out[f"{label}: its page-table row"] = ("in use" if row_idx in used else "free") if row_idx >= 0 else "none"
    out[f"{label}: free pages"] = s.cache.num_free
    out[f"{label}: pages in the prefix cache"] = _cached(s, ballast)
    out[f"{label}: evictable pages"] = s.cache.prefix_cache.num_evictable
    out[f"{label}: releases waiting for a batch in flight"] = s.cache.num_deferred
    out[f"{label}: cache.check()"] = consistent(s)
    return ids if req is not None else []


def _engine(run: Callable[[], Any]) -> str:
    """Engine work after the answer's abort; a crash there is an observable, not the answer's raise."""
    try:
        run()
    except Exception as e:
        return f"crashed: {type(e).__name__}: {e}"
    return "ran"


def play(fn: Any, scene: AbortScene) -> dict:
    s = build(scene.setup)
    s.abort_fn = fn
    watch(s)
    ballast = ballast_pages(s)
    out: dict = {}
    steps, aborts, observing, ids = 0, 0, False, []
    arrive(s, scene.requests, 0)
    no_batch = object()

    def step(run: Callable[[], Any], scheduled: Any = no_batch) -> bool:
        """One step of the engine (`scheduled`: the batch it runs, chosen before an abort)."""
        nonlocal steps
        before = s.batch_count
        ran = _engine(run)
        steps += 1
        if observing:
            label = f"step {steps}"
            out[f"{label}: the engine"] = ran
            if scheduled is no_batch:
                scheduled = s.last_batch if s.batch_count > before else None
            out[f"{label}: the batch"] = items_of(scheduled)
            out[f"{label}: messages to the detokenizer"] = messages(s)
        else:
            s.io.drain()
        if ran == "ran":
            arrive(s, scene.requests, steps)
        return ran == "ran"

    one_step = s.overlap_step if scene.overlap else s.step
    for kind, uid in scene.ops:
        if kind == STEP:
            for _ in range(uid):
                if not step(one_step):
                    return out
            continue
        batch = None
        if kind == SCHEDULED:
            chosen: list = []
            ran = _engine(lambda: chosen.append(s.schedule()))
            if ran != "ran":
                out[f"step {steps + 1}: the engine"] = ran
                return out
            batch = chosen[0]
        for _ in range(2 if kind == TWICE else 1):
            aborts += 1
            got = _observe_abort(s, out, f"abort {aborts} (uid {uid})", uid, ballast)
            ids = ids or got
        observing = True
        if kind == SCHEDULED and not step(lambda: batch is not None and s.run_batch(batch), batch):
            return out
    for _ in range(scene.after):
        if not step(one_step):
            return out
    out["at the end: free pages"] = s.cache.num_free
    out["at the end: pages in the prefix cache"] = _cached(s, ballast)
    out["at the end: evictable pages"] = s.cache.prefix_cache.num_evictable
    out["at the end: rows in use"] = sorted(s.cache.uid_of_row.get(r, -1) for r in s.cache.page_table.used_rows())
    out["at the end: cache.check()"] = consistent(s)
    if ids:
        out["a new request that starts with the aborted request's tokens: cached tokens it reuses"] = _follow_up(
            s, scene, ids
        )
    return out


def _follow_up(s: Scheduler, scene: AbortScene, ids: list[int]) -> Any:
    from minisgl_edu.core import SamplingParams

    req = s.add_request(FOLLOW_UP, ids + token_ids(3, 999), SamplingParams(max_tokens=1, ignore_eos=True))
    for _ in range(12):
        if req.table_idx >= 0 or req.is_finished:
            return req.prefix_len
        ran = _engine(s.overlap_step if scene.overlap else s.step)
        if ran != "ran":
            return ran
    return "not admitted"


# ------------------------------------------------------------------------------- hints
RELEASE = "give back what it holds with scheduler.cache.release(req, cache_it=False)"
RELEASE_STRETCH = "give back what it holds with scheduler.cache.release(req, cache_it=True)"
MARK = "mark it finished: req.status = ReqStatus.FINISHED and req.finish_reason = 'abort'"


def _returned(scene: Any, diff: Difference) -> str:
    if diff.expected is True:
        return "return True for a live uid (a key of scheduler.reqs), whatever its state"
    return NOT_LIVE


def _queue(name: str) -> Callable[[Any, Difference], str]:
    def hint(scene: Any, diff: Difference) -> str:
        extra = [u for u in diff.got if u not in diff.expected]
        lost = [u for u in diff.expected if u not in diff.got]
        if extra and lost:
            return (
                f"remove the aborted request itself from scheduler.{name}, not the head of the queue: uid {lost[0]} "
                f"was taken out instead, and uid {extra[0]} is still there"
            )
        if extra and name == "waiting" and diff.got.index(extra[0]) > 0:
            return (
                f"take the aborted request out of scheduler.waiting wherever it stands (uid {extra[0]} is still "
                "there, behind another): not only when it is the head of the queue"
            )
        if extra and name == "waiting":
            return (
                f"take the aborted request out of scheduler.waiting (uid {extra[0]} is still there): a request "
                "stays in that deque, admitted (with a row) or not, until its whole prompt is computed"
            )
        if extra:
            return f"take the aborted request out of scheduler.{name} (uid {extra[0]} is still there)"
        return (
            f"touch only the aborted request: the others stay in scheduler.{name}, in the same order "
            "(the aborted one is not necessarily the head of the queue: remove that request itself)"
        )

    return hint


def _pages(stretch: bool, answer: list) -> Callable[[Any, Difference], str]:
    def hint(scene: Any, diff: Difference) -> str:
        pairs = [(diff.expected.get(p), diff.got.get(p)) for p in diff.expected] if isinstance(diff.got, dict) else []
        for want, got in pairs:
            if want == got:
                continue
            if want == "still in its row" and got == "free":
                return (
                    "its batch is in flight (overlap loop): no page goes back before the batch lands; "
                    "scheduler.cache.release() waits for it"
                )
            if got and "and free" in got:
                return "a page of the prefix cache was also freed: a page the cache holds is never on the free list"
            if got == "in the prefix cache" and want == "free":
                if stretch:
                    return (
                        "only whole pages of computed tokens (the first req.cached_len of req.all_ids) go into "
                        "the prefix cache: not a partly computed last page, the newest sampled token's slot, a "
                        "chunk not run yet, nor a page reserved for a step that has not run"
                    )
                return "this engine does not cache an aborted request: release(req, cache_it=False)"
            if want == "in the prefix cache" and got == "free":
                if stretch and answer and drops_a_computed_token(answer[0]):
                    return DROPS_A_COMPUTED_TOKEN
                if stretch and answer and empties_the_output(answer[0]):
                    return OUTPUT_EMPTIED
                if stretch and answer and caches_the_prompt_only(answer[0]):
                    return PROMPT_ONLY
                if stretch:
                    return (
                        "its computed full pages go into the prefix cache, filed under their tokens; and the pages "
                        "of its cached prefix stay the cache's: release(req, cache_it=True) does both"
                    )
                return (
                    "the pages of its cached prefix (its prefix hit) stay in the prefix cache, never on the free list"
                )
            if want == "free" and got in ("still in its row", "lost (neither free, cached nor in a row)"):
                return (
                    "give back every page of its own: full, partly written, or reserved by schedule() for a step "
                    "that has not run (a request part-way through a chunked prefill holds pages too)"
                )
        return RELEASE_STRETCH if stretch else RELEASE

    return hint


def _again(scene: Any, field: str) -> bool:
    """Whether the abort the field names is of a uid an earlier abort already took out."""
    if not field.startswith("abort "):
        return False
    arrives = {spec.uid: spec.arrive for spec in scene.requests}
    n, seen, steps = int(field.split()[1]), [], 0
    for kind, uid in scene.ops:
        for _ in range({STEP: 0, TWICE: 2}.get(kind, 1)):
            if len(seen) == n - 1:
                return uid in seen
            if steps >= arrives.get(uid, steps + 1):  # it had arrived: this abort took it out
                seen.append(uid)
        steps += uid if kind == STEP else kind == SCHEDULED
    return False


def _free(stretch: bool) -> Callable[[Any, Difference], str]:
    def hint(scene: Any, diff: Difference) -> str:
        if isinstance(diff.got, int) and diff.got > diff.expected and _again(scene, diff.field):
            return (
                "a uid aborted already is not live: return False and change nothing (a release the first abort "
                "left waiting for a batch in flight finishes on its own)"
            )
        if isinstance(diff.got, int) and diff.got > diff.expected:
            return "too many pages are free: a page was freed twice, or one that is not the request's own"
        return "some pages were not given back: " + (RELEASE_STRETCH if stretch else RELEASE)

    return hint


def _evictable(scene: Any, diff: Difference) -> str:
    if isinstance(diff.got, int) and diff.got > diff.expected:
        return (
            "its hold on the cached prefix was given up twice (a lock counts the requests reading it): "
            "release() unlocks it once, and when the batch is in flight it does so when the batch lands"
        )
    return "the cached prefix it read is still locked: give up its hold once (release() does)"


def _engine_hint(scene: Any, diff: Difference) -> str:
    text = str(diff.got)
    if "unlocked more often than locked" in text:
        return (
            "its hold on the cached prefix was given up twice: release() unlocks it, and when the request's "
            "batch is in flight it does so when the batch lands, so do not unlock it yourself"
        )
    if "freed twice" in text:
        return "a page was freed twice: release() gives back each of the request's pages once, when it is safe"
    return (
        "after your abort the engine could not go on: leave the request nowhere (reqs, waiting, running), "
        "marked finished, and everything it held given back through release()"
    )


def _row_zero_skipped(scheduler: Scheduler, uid: int) -> bool:
    """The package's abort_request with one mistake: it gives back what the request holds only when
    req.table_idx > 0, taking row 0 for "no row" (as `if req.table_idx:` does)."""

    def release(req: Req, cache_it: bool = True) -> None:
        if req.table_idx > 0:
            scheduler.cache.release(req, cache_it)

    scope = SimpleNamespace(  # what abort_request touches (AbortScope), with the mistaken release()
        reqs=scheduler.reqs,
        waiting=scheduler.waiting,
        running=scheduler.running,
        io=scheduler.io,
        cache=SimpleNamespace(release=release),
    )
    return abort_request(scope, uid)


def _or_row_zero(hint: Any, answer: list) -> Callable[[Any, Difference], str]:
    """`hint`, unless the answer (answer[0]) takes row 0 for no row and that explains its difference.
    On a small scene a request left holding row 0 looks the same whatever the reason (waiting, or
    not yet computed), so the answer is also tried on two requests of its own, on rows 0 and 1."""

    def named(scene: Any, diff: Difference) -> str:
        if answer and made_by(play, _row_zero_skipped, abort_request, scene, diff) and skips_row_zero(answer[0]):
            return ROW_ZERO
        return hint(scene, diff) if callable(hint) else hint

    return named


# Fields a release() that read changed request fields makes differ.
MEMORY = {"where the pages of its row are", "its page-table row", "free pages", "pages in the prefix cache"}
MEMORY |= {"evictable pages", "cache.check()", "the engine", "rows in use", "cached tokens it reuses"}


def hints(stretch: bool, answer: list) -> SceneHints:
    """The hints by field; `answer` holds the answer being graded once its search starts."""
    by_kind = _hints(stretch, answer)
    if not stretch:
        handle = {kind: or_by_the_handle(hint, answer) if kind in MEMORY else hint for kind, hint in by_kind.items()}
        by_kind = SceneHints({kind: _or_row_zero(hint, answer) for kind, hint in handle.items()})
    else:  # a count the abort raised to a whole page before release() is named before the symptom
        by_kind = SceneHints(
            {
                kind: or_last_chunk(or_rounded_up(hint, answer), answer) if kind in MEMORY else hint
                for kind, hint in by_kind.items()
            }
        )
    return SceneHints(
        {
            kind: or_fields_changed(hint, lambda scene: answer and play(answer[0], scene)) if kind in MEMORY else hint
            for kind, hint in by_kind.items()
        }
    )


def _hints(stretch: bool, answer: list) -> SceneHints:
    return SceneHints(
        {
            "returned": or_uid_zero(_returned, answer),
            "messages to the detokenizer": messages_hint,
            "scheduler.reqs": _queue("reqs"),
            "scheduler.waiting": _queue("waiting"),
            "scheduler.running": _queue("running"),
            "its status": status_hint(MARK),
            "where the pages of its row are": _pages(stretch, answer),
            "its page-table row": "release() gives back the request's page-table row with its pages",
            "pages of its row the prefix cache files under other tokens": FILED_ANYWHERE,
            "free pages": _free(stretch),
            "pages in the prefix cache": (
                "whole pages of req.all_ids[:req.cached_len] go into the prefix cache, each once; the cache keeps "
                "its own pages"
                if stretch
                else "the prefix cache holds exactly what it held before: this engine does not cache an aborted "
                "request, and keeps the pages of its prefix"
            ),
            "evictable pages": _evictable,
            "releases waiting for a batch in flight": (
                "release() once, and only for a live uid: when the batch is in flight it waits, and happens by "
                "itself when the batch lands"
            ),
            "cache.check()": "every page is free, in a row, or in the prefix cache, exactly once",
            "the engine": _engine_hint,
            "the batch": "the batch scheduled before the abort still lists the request: " + MARK,
            "rows in use": "release() gives back the request's page-table row",
            "cached tokens it reuses": (
                "the computed full pages of the aborted request, filed under their tokens, serve a new request"
                if stretch
                else "this engine does not cache an aborted request: the cache holds what it held before"
            ),
        }
    )


def abort_case(reference: Any, stretch: bool = False, examples: int = 150) -> Any:
    """The generated case of `abort` (stretch=False) or `abort_to_cache`."""
    answer: list = []
    h = hints(stretch, answer)
    case = generated(
        ("stretch: " if stretch else "") + f"generated: {examples} schedulers with aborts at any moment",
        abort_scenes(),
        play,
        show,
        reference,
        h,
        examples,
        hint="abort at any moment: waiting, part-way through a prompt, decoding, scheduled, in flight, finished",
        raised_hint="your abort raised: a uid may be unknown, finished or aborted already (return False then)",
    )
    search = case.run

    def run(impl: Any) -> None:
        fail_fast_if_stub(impl, 0)  # an untouched stub fails before the engine is loaded
        answer[:] = [impl]
        search(impl)

    return replace(case, run=run)  # the same case (its limit too), the stub checked first
