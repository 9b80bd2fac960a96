"""Overlap scheduling: prepare batch N+1 on the CPU while batch N runs on the GPU.

Where this sits on the request path: it is the scheduler's other loop. `normal_loop` does, for
each batch, schedule -> forward -> wait for the tokens -> process them, so the GPU idles while
Python schedules and post-processes. `overlap_loop` reorders one iteration as

    schedule batch N+1  (CPU)          | GPU still running batch N
    launch batch N+1    (queue only)   |
    wait for batch N's tokens, process them (append, finish, reply)

which needs three things the normal loop does not:

1. **Tokens that the host has not seen yet.** Batch N+1 is scheduled before batch N's tokens are
   known. A decode request in batch N is scheduled again at its next position (`_ahead` counts
   its in-flight tokens), and its input token is read on the GPU from `Engine.last_tokens`, where
   batch N's sampler wrote it. A prompt whose last chunk is in flight is skipped (its
   `cached_len` is advanced at launch), and joins the decode set when its first token arrives.
2. **Finishing one step late.** A request whose `max_new_tokens` is reached in batch N is known
   in advance and not scheduled into N+1. One that stops on EOS or a stop string is only found
   when N is processed; by then it is in N+1 too, which computes one token too many; that token
   is dropped.
3. **Deferred frees.** Batch N+1 (already queued on the GPU) may still write the K/V of a request
   that finished or was aborted in batch N. So a batch's requests are pinned in the cache manager
   from its launch until it lands (`cache.pin` / `cache.unpin`); a `cache.release()` of a pinned
   request (from a finish, an abort, an exercise's abort) takes effect only at that `unpin`,
   otherwise its pages could be handed to a new request while the GPU still writes into them.

The batches and the model computation are exactly those of the normal loop whenever requests
finish by length (as in the offline benchmark), so greedy outputs are identical.

Requests whose next logits depend on their previous token on the host (a grammar's mask, the
penalties) cannot be launched before that token is known: a batch with such a request waits for
the batch in flight first (`_needs_host_tokens`); the others keep overlapping.

With speculative decoding on (`SchedulerConfig.speculative_algorithm`), drafts follow a request's
newest token, so they are only made when no decode token is in flight, and a verify batch reads
all its input tokens from the host; how many tokens a verify gives is known only when it lands.
So a batch lands before the next is scheduled when it verified drafts, or when one of its
requests would propose drafts now (`Speculator.must_land_first`); a batch whose requests have nothing to guess
keeps overlapping. After a verify, the newest token of each request (decided on the host by the
verify step) is written to `Engine.last_tokens` for the decode batches that read it there.

Mixed batches (`SchedulerConfig.mixed_chunk`) need nothing more: the rules above are applied per
item, so in one batch the prompt chunks advance `cached_len` at launch and the decode tokens count
in `_ahead` and read their input token from `Engine.last_tokens`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from minisgl_edu.core import Batch, Req
from minisgl_edu.scheduler.record import StepRecord

if TYPE_CHECKING:
    from minisgl_edu.engine.output import PendingForward


@dataclass
class InFlight:
    batch: Batch
    pending: PendingForward
    record: StepRecord
    t0: float


class OverlapMixin:
    """Overlap-loop methods of `Scheduler` (kept here so the normal path reads on its own)."""

    def _init_overlap(self) -> None:
        self._ahead: dict[int, int] = {}  # id(req) -> its sampled tokens not yet processed
        self._in_flight: Optional[InFlight] = None

    # ------------------------------------------------------------------ hooks used by Scheduler
    def _tokens_ahead(self, req: Req) -> int:
        return self._ahead.get(id(req), 0)

    # ------------------------------------------------------------------ launch / complete
    def _launch(self, batch: Batch) -> InFlight:
        t0 = time.perf_counter()
        record = StepRecord.of(batch)
        self.cache.pin(batch.reqs)  # released pages stay put until this batch lands
        for it in batch.items:  # item by item: a mixed batch has prompt chunks and decode tokens
            key = id(it.req)
            if it.is_decode:
                self._ahead[key] = self._ahead.get(key, 0) + 1
            else:
                it.req.cached_len = it.end  # not to be scheduled again while in flight
        self._trace_scheduled(batch)
        # A verify batch is made only when every newest token is on the host (`_schedule_decode`).
        pending = self.engine.launch_batch(batch, ids_on_device=not batch.has_drafts)
        return InFlight(batch, pending, record, t0)

    def _complete(self, fl: InFlight):
        out = fl.pending.result()  # the only wait for the GPU in the loop
        batch = fl.batch
        for it in batch.items:
            key = id(it.req)
            if it.is_decode and key in self._ahead:
                self._ahead[key] -= 1
                if not self._ahead[key]:
                    del self._ahead[key]
        # Requests that finished or were aborted meanwhile are skipped by _process_results.
        self._process_results(batch, out, fl.record)
        if batch.has_drafts:  # the verify step decided each request's newest token on the host
            verified = [it.req for it in batch.items if it.draft and not it.req.is_finished]
            self.engine.set_last_tokens([r.table_idx for r in verified], [r.output_ids[-1] for r in verified])
        self.cache.unpin(batch.reqs)  # the GPU is done with these pages: deferred releases happen now
        fl.record.seconds = time.perf_counter() - fl.t0
        return fl.record

    # ------------------------------------------------------------------ the loop
    def overlap_step(self, block: bool = False):
        """One overlap iteration: schedule and launch batch N+1, then finish batch N.

        Returns the StepRecord of the batch that was *finished* (None if none was in flight).
        """
        last, record = self._in_flight, None
        if last is not None and self.speculator.must_land_first(last.batch):
            # (speculative decoding) Its tokens are needed on the host before the next batch.
            record, last = self._complete(last), None
            self._in_flight = None
        batch = self.schedule(block=block and last is None)
        if batch is not None and last is not None and self._needs_host_tokens(batch):
            # Penalties count, and a grammar's mask follows, the tokens sampled so far: batch N's
            # must be known on the host before batch N+1 is launched, so here N lands first (no
            # overlap for this step, as SGLang waits for the previous batch's grammar state).
            record, last = self._complete(last), None
            batch = batch.without_finished()
        self._in_flight = self._launch(batch) if batch is not None else None
        if last is not None:
            record = self._complete(last)
        self._maybe_send_stats()
        return record

    def _needs_host_tokens(self, batch: Batch) -> bool:
        """Does a request of `batch` with a token still in flight need that token before its own
        logits can be processed (a grammar's mask, penalties over the output)?"""
        return any(
            self._tokens_ahead(it.req) and (it.req.grammar is not None or it.req.sampling_params.has_penalties)
            for it in batch.items
        )

    def overlap_loop(self) -> None:
        """Like `normal_loop`, with batch N+1 prepared while batch N runs (CUDA's default)."""
        while not self._exit:
            self.overlap_step(block=True)
        while self._in_flight is not None:  # let the last batch land before leaving
            self.overlap_step()

    @property
    def has_in_flight(self) -> bool:
        return self._in_flight is not None

    @property
    def in_flight_batch(self) -> Optional[Batch]:
        """(overlap loop) The batch launched and not yet landed: the GPU may still write its
        requests' K/V, so their pages are pinned (`CacheManager.pin`)."""
        return self._in_flight.batch if self._in_flight is not None else None
