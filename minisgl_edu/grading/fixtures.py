"""Scheduler states a grader starts its cases from, built one way for every grader.

Where this sits in the course: a case of the scheduling or abort exercise needs a scheduler in a
given moment (a request waiting, one part-way through a chunked prefill, one decoding, one whose
batch is in flight) and then looks at what the student's function does there. These helpers make
those moments, and take the snapshot a case compares with afterwards; the cases themselves only
say which moment and what must hold.

The API (for every grader that plugs a function into the scheduler):

* `plugged(fn, attr, *probe, **config)` -> a fresh scheduler (harness.new_scheduler) with `fn`
  at the injection point `attr` ("abort_fn", "schedule_fn", "finish_fn"); an untouched stub
  fails first, before the model is loaded (`probe`: the arguments after the scheduler);
* `step_until(s, done, what, step=None, max_steps=500)`: run `s.step()` (or `step`) until
  `done()`; `what` names the moment in the setup error if it never comes;
* `waiting(s, uid, n_or_ids, max_tokens=8)`: a request queued, not admitted;
* `decoding(s, uid, n_or_ids, max_tokens=8)`: a request whose prefill is done by hand (admitted,
  pages reserved for its prompt, one sampled token, in `running`), no model run; `prefilled(s,
  req)` does that to a request already waiting; `cached(s, ids)` puts `ids` in the prefix cache
  as a finished request would have left them;
* `apply(s, batch)`: what the engine and the result step do with a batch, without the model:
  the scheduler's own `advance` (chunks move `cached_len` on; a finished prefill moves to
  `running`), and a made-up token for each item at its end; no finish check;
* `held(s, uid, match=False)` -> `Held`: what a live request holds (its row, which of its pages
  are its own, its computed tokens) and the cache around it (free, cached, evictable pages);
  `match=True` also counts the pages of its tokens the prefix cache holds already (`known`);
* `modelless(**config)`: a fresh scheduler whose engine samples a made-up token instead of
  running the model (`Modelless`), so that `step()`, `overlap_step()` and `run_batch()` run the
  real scheduler in microseconds: the generated scenes of the scheduling and abort exercises
  play hundreds of scheduler states that way; `ballast(s, n)` locks `n` pages in the prefix
  cache, leaving a small pool for the requests.

Only the scheduler's public attributes (`waiting`, `running`, `reqs`, `cache`, `io`) and its
injection points are touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from minisgl_edu.core import Batch, Req, SamplingParams, ScheduledReq
from minisgl_edu.engine.output import ForwardOutput, PendingForward
from minisgl_edu.grading.harness import fail_fast_if_stub, new_scheduler
from minisgl_edu.scheduler import Scheduler

FAKE_TOKEN = 100  # what a hand-made "forward pass" samples: the unit cases never run the model


def token_ids(n: int, seed: int) -> list[int]:
    """n token ids of the default model's vocabulary, different for each seed."""
    return [(seed * 7919 + i * 104729) % 49000 + 100 for i in range(n)]


def plugged(fn: Any, attr: str, *probe: Any, **config: Any) -> Scheduler:
    fail_fast_if_stub(fn, *probe)
    s = new_scheduler(**config)
    setattr(s, attr, fn)
    return s


def step_until(
    s: Scheduler, done: Callable[[], bool], what: str, step: Optional[Callable[[], Any]] = None, max_steps: int = 500
) -> None:
    for _ in range(max_steps):
        if done():
            return
        (step or s.step)()
    raise AssertionError(f"setup: {what} never happened in {max_steps} steps")


def waiting(s: Scheduler, uid: int, ids: Union[int, list[int]], max_tokens: int = 8) -> Req:
    ids = token_ids(ids, uid) if isinstance(ids, int) else ids
    req = s.add_request(uid, ids, SamplingParams(max_tokens=max_tokens, ignore_eos=True))
    assert req is not None, f"setup: request {uid} was rejected"
    return req


def decoding(s: Scheduler, uid: int, ids: Union[int, list[int]], max_tokens: int = 8) -> Req:
    return prefilled(s, waiting(s, uid, ids, max_tokens))


def prefilled(s: Scheduler, req: Req) -> Req:
    """A waiting `req` made a running one, as after its prefill (with its cached prefix, if any)."""
    n = len(req.input_ids)
    s.cache.admit(req)
    s.cache.reserve(req, n)
    apply(s, Batch("prefill", [ScheduledReq(req, req.cached_len, n - req.cached_len)]))
    return req


def cached(s: Scheduler, ids: list[int]) -> list[int]:
    """Put `ids` (whole pages) in the prefix cache on fresh pages, as a finished request would."""
    n = len(ids) // s.cache.page_size
    s.cache.prefix_cache.insert(ids, s.cache.allocator.allocate(n))
    return ids


def apply(s: Scheduler, batch: Batch) -> None:
    """The scheduler's own bookkeeping of a batch's results (`Scheduler.advance`), with a made-up
    token for each item that reached the end of its known tokens; no finish check."""
    for it in batch.items:
        sampled = it.end >= it.req.total_len  # else a chunk of a prompt: no token yet
        s.advance(it, sampled)
        if sampled:
            it.req.output_ids.append(FAKE_TOKEN)


@dataclass
class Held:
    """What a live request holds, and the cache around it, at one moment."""

    uid: int
    row_idx: int  # -1: no row (not admitted)
    row: list[int]
    own_from: int  # row pages before this index are the prefix cache's (its prefix hit)
    cached_len: int  # tokens with computed K/V
    all_ids: list[int]
    prompt_len: int
    free: int
    cached: set[int] = field(default_factory=set)
    evictable: int = 0
    known: int = 0  # with match=True: pages along all_ids the prefix cache already held

    @property
    def own(self) -> list[int]:
        return self.row[self.own_from :]

    @property
    def shared(self) -> list[int]:
        return self.row[: self.own_from]

    def full(self, page_size: int) -> int:
        """Full pages of computed K/V."""
        return self.cached_len // page_size


def held(s: Scheduler, uid: int, match: bool = False) -> Held:
    req, cache = s.reqs[uid], s.cache
    row = list(cache.page_table.pages[req.table_idx]) if req.table_idx >= 0 else []
    tree = cache.prefix_cache
    return Held(
        uid,
        req.table_idx,
        row,
        max(req.prefix_len, req.shared_len) // cache.page_size,
        req.cached_len,
        list(req.all_ids),
        len(req.input_ids),
        cache.num_free,
        set(tree.cached_pages()),
        tree.num_evictable,
        len(tree.match_prefix(req.all_ids)[1]) if match else 0,
    )


def made_up_token(req: Req, position: int) -> int:
    """What `Modelless` samples for `req` at `position`: an ordinary token (never an end id), the
    same on every run, different for each request and position."""
    return 100 + (req.uid * 7919 + position * 104729) % 48000


class Modelless:
    """The shared engine with its forward pass replaced by `made_up_token`: everything else (the
    pool, the page table, the device) is the engine's. The scheduler's own code (results, finish
    checks, deferred releases on the overlap loop) runs unchanged; only the model does not."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def launch_batch(self, batch: Batch) -> PendingForward:
        tokens = [[made_up_token(it.req, it.end)] if it.completes_prompt else [] for it in batch.items]
        return PendingForward([], None, ready=ForwardOutput(tokens, [[None] * len(t) for t in tokens]))

    def forward_batch(self, batch: Batch) -> ForwardOutput:
        return self.launch_batch(batch).result()

    def set_last_tokens(self, rows: list[int], tokens: list[int]) -> None:
        pass  # nothing reads them: the made-up token needs no input


def modelless(**config: Any) -> Scheduler:
    """A fresh scheduler (harness.new_scheduler) on a `Modelless` engine."""
    s = new_scheduler(**config)
    s.engine = Modelless(s.engine)
    return s


BALLAST_TOKEN = 10**6  # never a real token id: no request's prompt can match the ballast


def ballast(s: Scheduler, pages: int) -> None:
    """Lock `pages` pages in the prefix cache (radix only), out of every request's reach: the
    requests share what is left of the pool, as on a small machine."""
    if pages <= 0:
        return
    tree = s.cache.prefix_cache
    ids = [BALLAST_TOKEN + i for i in range(pages * s.cache.page_size)]
    tree.insert(ids, s.cache.allocator.allocate(pages))
    tree.lock(tree.match_prefix(ids)[0])
