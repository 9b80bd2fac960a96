"""The speculator: everything speculative decoding adds to the scheduler, behind one object.

Where this sits on the request path: beside the scheduler, which calls it at two fixed points.

    schedule   `drafts(req)` while a decode batch is built: the request's guessed next tokens
               (n-gram drafts, `ngram.py`), or [] (off, paused, or a request whose logits would
               depend on drafts not yet accepted). A batch with drafts is a "verify" batch.
    results    `verified(req, drafts, targets, record)` when a verify batch has run: the verify
               step (`verify_step.py`, or exercise 8's replacement in `verify_fn`) says which tokens
               the request keeps; here the pages of rejected drafts go back, `cached_len` stops
               before them, the outcome is counted and the back-off updated. The scheduler then
               appends the kept tokens one by one, as it appends a decode step's one token.

The overlap loop asks one more question (`must_land_first`): a verify batch must land before the
next batch is scheduled, since how many tokens it gives is known only then.

Per request the speculator keeps a `DraftState` (on `Req.draft_state`): verifies in a row that
accepted nothing, and decode steps left without drafts (`ngram.backoff`): drafts that keep failing
cost verify positions for nothing; and the newest lookup, so that a request's tokens are searched
once however often the loop asks.
"""

from __future__ import annotations

from typing import Callable

from minisgl_edu.core import Batch, DraftState, Req
from minisgl_edu.kvcache import CacheManager
from minisgl_edu.scheduler.config import SchedulerConfig
from minisgl_edu.scheduler.ngram import backoff, propose_ngram
from minisgl_edu.scheduler.record import StepRecord
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult, verify_step


class Speculator:
    def __init__(
        self,
        config: SchedulerConfig,
        num_draft_tokens: int,
        cache: CacheManager,
        eos_ids: set[int],
        decode_tail: Callable[[list[int]], str],
    ) -> None:
        self.enabled = config.speculative_algorithm is not None
        self.num_draft_tokens = num_draft_tokens  # k: drafts per request and step, at most
        self.ngram_max, self.ngram_min = config.speculative_ngram_max, config.speculative_ngram_min
        self.cache = cache
        self.eos_ids = eos_ids
        self.decode_tail = decode_tail
        # Exercise 8 of the course replaces the verify step (`Scheduler.verify_fn` sets this).
        self.verify_fn: Callable[[VerifyRequest, list[int], list[int]], VerifyResult] = verify_step
        # Verifies by outcome: verify_outcomes[d][a] = verifies of d drafts that accepted a
        # (/metrics and /dashboard; the totals below are counted from it).
        k = num_draft_tokens
        self.verify_outcomes = [[0] * (k + 1) for _ in range(k + 1)]

    # ------------------------------------------------------------------ schedule
    def drafts(self, req: Req) -> list[int]:
        """The drafts `req` verifies this step, or [] (a paused request counts one step down)."""
        state = req.draft_state
        if state is not None and state.pause > 0:
            state.pause -= 1
            return []
        return self.guess(req)

    def guess(self, req: Req) -> list[int]:
        """The drafts `req` proposes from its tokens on the host (nothing changed), or []."""
        if not self.enabled or req.grammar is not None or req.sampling_params.has_penalties:
            return []  # a grammar's mask and the penalties would depend on drafts not yet accepted
        if req.draft_state is not None and req.draft_state.pause > 0:
            return []
        # One lookup per request and token count: under the overlap loop `must_land_first` asks
        # before the next batch is scheduled, and `drafts` may ask again on the same tokens.
        state = req.draft_state = req.draft_state or DraftState()
        if state.looked_up_at != req.total_len:
            # The drafts plus the model's own token stay within max_new_tokens, so within the
            # pages reserved for the request at admission.
            k = min(self.num_draft_tokens, req.max_new_tokens - len(req.output_ids) - 1)
            state.found = propose_ngram(req.all_ids, k, self.ngram_max, self.ngram_min)
            state.looked_up_at = req.total_len
        return list(state.found)

    def must_land_first(self, batch: Batch) -> bool:
        """(overlap loop) Must `batch` land before the next one is scheduled? Yes if it verified
        drafts (how many tokens each request got is known only then), or if one of its requests
        finds drafts in its tokens on the host (after the newest one, it likely will)."""
        if not self.enabled:
            return False
        return batch.has_drafts or any(it.is_decode and self.guess(it.req) for it in batch.items)

    # ------------------------------------------------------------------ results
    def verified(self, req: Req, drafts: list[int], targets: list[int], record: StepRecord) -> list[int]:
        """Apply the verify step of `req` (its drafts, the model's tokens at their positions);
        -> the tokens it keeps, in order, for the scheduler to append."""
        step = self.verify_fn(VerifyRequest.of(req, self.cache, self.eos_ids, self.decode_tail), drafts, targets)
        record.freed_pages[req.uid] = self.cache.trim(req, step.free_pages)
        req.cached_len = step.kv_len  # the rejected drafts' K/V are dead: never counted, never cached
        self.verify_outcomes[len(drafts)][step.accepted] += 1
        state = req.draft_state = req.draft_state or DraftState()
        state.misses = 0 if step.accepted else state.misses + 1
        state.pause = backoff(state.misses)
        record.accepted[req.uid] = drafts[: step.accepted]
        return step.tokens

    # ------------------------------------------------------------------ counts
    @property
    def draft_tokens_total(self) -> int:
        """Drafts proposed for verification since start-up."""
        return sum(d * n for d, row in enumerate(self.verify_outcomes) for n in row)

    @property
    def accepted_tokens_total(self) -> int:
        """Drafts the model accepted since start-up."""
        return sum(a * n for row in self.verify_outcomes for a, n in enumerate(row))
