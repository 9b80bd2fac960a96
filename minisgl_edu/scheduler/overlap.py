"""Overlap scheduling: prepare batch N+1 on the CPU while batch N runs on the GPU.

Where this sits on the request path: it is the scheduler's other loop. Both loops are made of the
same three steps of the scheduler (`schedule`, `launch`, `land`, declared below as `LoopSteps`);
they differ only in their order. `normal_loop` runs, for each batch,

    schedule batch N -> launch N -> land N (wait for its tokens, process them)

so the GPU idles while Python schedules and post-processes. `OverlapLoop.step` runs

    schedule batch N+1  (CPU)          | GPU still running batch N
    launch batch N+1    (queue only)   |
    land batch N        (wait for its tokens, process them: append, finish, reply)

What makes the second order possible is done by `launch` and `land` for both loops (see
`Scheduler.launch`):

1. **Tokens that the host has not seen yet.** From `launch` to `land`, a decode request counts its
   token in flight (`tokens_ahead`), so the next batch schedules it at its next position; its input
   token is read on the device from `Engine.last_tokens`, where the batch before wrote it (the
   engine reads every decode token from there, in either loop). A prompt whose last chunk is in
   flight is skipped (`launch` advances its `cached_len`), and joins the decode set when its
   first token lands.
2. **Finishing one step late.** A request whose `max_new_tokens` is reached in batch N is known
   in advance and not scheduled into N+1. One that stops on EOS or a stop string is only found
   when N lands; by then it is in N+1 too, which computes one token too many; that token is
   dropped.
3. **Deferred frees.** Batch N+1 (already queued on the GPU) may still write the K/V of a request
   that finished or was aborted in batch N. So a batch's requests are pinned in the cache manager
   from its launch until it lands (`cache.pin` / `cache.unpin`); a `cache.release()` of a pinned
   request (from a finish, an abort, an exercise's abort) takes effect only when no batch in
   flight holds it, otherwise its pages could be handed to a new request while the GPU still
   writes into them.

The batches and the model computation are exactly those of the normal loop whenever requests
finish by length (as in the offline benchmark), so greedy outputs are identical.

Requests whose next logits depend on their previous token on the host (a grammar's mask, the
penalties) cannot be launched before that token is known: a batch with such a request waits for
the batch in flight to land first (`needs_host_tokens`); the others keep overlapping.

With speculative decoding on (`SchedulerConfig.speculative_algorithm`), drafts follow a request's
newest token, so they are only made when no decode token is in flight, and a verify batch reads
all its input tokens from the host; how many tokens a verify gives is known only when it lands.
So a batch lands before the next is scheduled when it verified drafts, or when one of its
requests would propose drafts now (`Speculator.must_land_first`); a batch whose requests have
nothing to guess keeps overlapping. (`land` writes each verified request's newest token, decided
on the host, to `Engine.last_tokens` for the decode batches that read it there.)

Mixed batches (`SchedulerConfig.mixed_chunk`) need nothing more: the rules above are applied per
item, so in one batch the prompt chunks advance `cached_len` at launch and the decode tokens count
as in flight and read their input token from `Engine.last_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Protocol

from minisgl_edu.core import Batch, Req
from minisgl_edu.scheduler.record import StepRecord

if TYPE_CHECKING:
    from minisgl_edu.engine.output import PendingForward


@dataclass
class InFlight:
    """A batch launched and not yet landed (`Scheduler.launch` -> `Scheduler.land`)."""

    batch: Batch
    pending: PendingForward
    record: StepRecord
    t0: float


class LoopSteps(Protocol):
    """What a loop needs from the scheduler: the steps `normal_loop` runs in order."""

    def schedule(self, block: bool = False) -> Optional[Batch]: ...
    def launch(self, batch: Batch) -> InFlight: ...
    def land(self, fl: InFlight) -> StepRecord: ...
    def tokens_ahead(self, req: Req) -> int: ...
    def must_land_first(self, batch: Batch) -> bool: ...
    def send_stats(self) -> None: ...


class OverlapLoop:
    """The overlap order of the scheduler's steps, and the one batch it keeps in flight."""

    def __init__(self, steps: LoopSteps) -> None:
        self.steps = steps
        self.in_flight: Optional[InFlight] = None

    def step(self, block: bool = False) -> Optional[StepRecord]:
        """One overlap iteration: schedule and launch batch N+1, then land batch N.

        Returns the StepRecord of the batch that landed (None if none was in flight).
        """
        steps, last, record = self.steps, self.in_flight, None
        if last is not None and steps.must_land_first(last.batch):
            # (speculative decoding) Its tokens are needed on the host before the next batch.
            record, last = self._land_now(), None
        batch = steps.schedule(block=block and last is None)
        if batch is not None and last is not None and self.needs_host_tokens(batch):
            # Penalties count, and a grammar's mask follows, the tokens sampled so far: batch N's
            # must be known on the host before batch N+1 is launched, so here N lands first (no
            # overlap for this step, as SGLang waits for the previous batch's grammar state).
            record, last = self._land_now(), None
            batch = batch.without_finished()
        self.in_flight = steps.launch(batch) if batch is not None else None
        if last is not None:
            record = steps.land(last)
        steps.send_stats()
        return record

    def _land_now(self) -> StepRecord:
        """Land the batch in flight before the next one is launched."""
        fl, self.in_flight = self.in_flight, None
        return self.steps.land(fl)

    def run(self, until: Callable[[], bool]) -> None:
        """Step until `until()` is true, then let the last batch land."""
        while not until():
            self.step(block=True)
        while self.in_flight is not None:
            self.step()

    def needs_host_tokens(self, batch: Batch) -> bool:
        """Does a request of `batch` with a token still in flight need that token before its own
        logits can be processed (a grammar's mask, penalties over the output)?"""
        return any(
            self.steps.tokens_ahead(it.req) and (it.req.grammar is not None or it.req.sampling_params.has_penalties)
            for it in batch.items
        )
