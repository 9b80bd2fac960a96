"""The scheduler: decides, every iteration, which tokens the engine computes next.

Where this sits on the request path: a `UserMsg` arrives from a tokenizer worker and becomes a
`Req` in the waiting queue. Each iteration of `normal_loop` is one `step()`:

    1. receive      new requests and aborts (`receive`, `_process_msg`)
    2. schedule     `_schedule_next_batch`: a prefill batch if anyone waits (under a token
                    budget, chunking a long prompt), otherwise one decode batch of everyone running;
                    with `config.mixed_chunk`, the running requests' decode tokens join the prefill
                    batch in one forward pass (a "mixed" batch)
    3. launch       `launch`: `Engine.launch_batch` runs the model and samples (on CUDA only
                    queued: the device works while the host goes on)
    4. land         `land`: wait for the batch's tokens, then `_process_results`: append tokens,
                    check finish, free what finished, send one `DetokenizeMsg` per new token to
                    the detokenizer

`overlap_loop` (CUDA's default) runs the same steps in another order: it schedules and launches
batch N+1 before it lands batch N (`overlap.py`).

The request features beyond the plain path are each one object or module, called at fixed
points: `n > 1` (`prompt_sharing.py`: receive, schedule, results), structured output
(`structured.py`: receive, results), speculative decoding (`speculator.py`: drafts while a decode
batch is built, the verify step on its results; a batch with drafts is a "verify" batch). The
logits chain, logprobs and sampling live in the engine.

New requests join between any two steps while others are decoding: continuous batching.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable, Optional

from minisgl_edu.core import Batch, Req, ReqStatus, SamplingParams, ScheduledReq
from minisgl_edu.engine import Engine
from minisgl_edu.engine.output import ForwardOutput
from minisgl_edu.engine.sampler import make_generator
from minisgl_edu.kvcache import CacheManager, pages_for
from minisgl_edu.message import AbortBackendMsg, BaseBackendMsg, DetokenizeMsg, ExitMsg, UserMsg, unwrap
from minisgl_edu.message.stamps import stamp
from minisgl_edu.scheduler import prompt_sharing
from minisgl_edu.scheduler.abort import abort_request
from minisgl_edu.scheduler.config import SchedulerConfig
from minisgl_edu.scheduler.finish import check_finish
from minisgl_edu.scheduler.io import QueueIO, SchedulerIO
from minisgl_edu.scheduler.overlap import InFlight, OverlapLoop
from minisgl_edu.scheduler.record import StepRecord
from minisgl_edu.scheduler.speculator import Speculator
from minisgl_edu.scheduler.stats import SchedulerStats, StatsPacer, collect_stats
from minisgl_edu.scheduler.structured import StructuredOutput
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.trace import NULL_TRACER, Tracer


def schedule_next_batch(scheduler: "Scheduler") -> Optional[Batch]:
    """The scheduling decision: prefill first (new prompts get their first token fast, under the
    token budget), otherwise one decode batch of everyone running; None when there is nothing.
    With `config.mixed_chunk`, a prefill batch also carries every running request's decode token.

    The default of `Scheduler.schedule_fn`; exercise 5 of the course replaces it.
    """
    if scheduler.config.mixed_chunk:
        batch = scheduler._schedule_mixed()
        if batch is not None:
            return batch
    batch = scheduler._schedule_prefill() if scheduler.waiting else None
    if batch is None and scheduler.running:
        batch = scheduler._schedule_decode()
    return batch


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        io: Optional[SchedulerIO] = None,
        engine: Optional[Engine] = None,
        tokenizer=None,
        tracer: Tracer = NULL_TRACER,
    ) -> None:
        self.config = config
        self.io = io or QueueIO()
        self.engine = engine or Engine(config)
        self.tracer = tracer
        if tokenizer is None:
            from minisgl_edu.models import load_tokenizer

            tokenizer = load_tokenizer(self.engine.model_path)
        self.tokenizer = tokenizer
        self.cache = CacheManager(self.engine.pool, self.engine.page_table, config.cache)
        mc = self.engine.model_config
        self.eos_ids: set[int] = set(mc.eos_token_ids)
        if getattr(tokenizer, "eos_token_id", None) is not None:
            self.eos_ids.add(tokenizer.eos_token_id)
        self.max_seq_len = self.engine.max_seq_len
        self.vocab_size = mc.vocab_size
        # At most the rows of the engine's page table (the engine chose how many when the config
        # named none: `EngineConfig.max_running_requests`); a scheduler built on a shared engine
        # (the course's graders) may ask for fewer.
        rows = self.engine.page_table.max_reqs
        self.max_running = min(config.max_running_requests or rows, rows)
        cuda = self.engine.device.type == "cuda"
        self.max_prefill_tokens = config.max_prefill_tokens or (8192 if cuda else 2048)

        self.waiting: deque[Req] = deque()  # FIFO; the head may be part-way through a chunked prefill
        self.running: list[Req] = []  # prompt done, decoding one token per step
        self.reqs: dict[int, Req] = {}  # every live request by uid
        self.batch_count = 0
        self.generated_tokens_total = 0
        self._exit = False
        self.last_batch: Optional[Batch] = None  # the batch scheduled last (for the stats)
        self.prefix_hit_tokens_total = 0  # prompt tokens served from the prefix cache
        self.prompt_tokens_total = 0  # prompt tokens of the admitted requests
        self.stats_pacer = StatsPacer()  # when the next stats message may go out
        # The features beyond the plain path, each behind one object (see the module docstring).
        self.grammars = StructuredOutput(tokenizer, self.vocab_size, self.eos_ids)
        # Drafts per request and step: `SchedulerConfig.speculative_num_draft_tokens`, by device if None.
        k = config.speculative_num_draft_tokens or (7 if cuda else 4)
        self.speculator = Speculator(config, k, self.cache, self.eos_ids, self._decode_tail)
        # Injection points for the course's exercises: the real engine calls these (and
        # `verify_fn`, below).
        self.finish_fn: Callable[..., Optional[str]] = check_finish
        self.abort_fn: Callable[["Scheduler", int], bool] = abort_request
        self.schedule_fn: Callable[["Scheduler"], Optional[Batch]] = schedule_next_batch
        self._ahead: dict[int, int] = {}  # id(req) -> its tokens launched and not landed yet
        self.overlap = OverlapLoop(self)  # the other order of the same steps (overlap.py)

    # ------------------------------------------------------------------ 1. receive
    def receive(self, block: bool = False) -> None:
        """Handle every message that arrived (`block`: wait a little if none has)."""
        for msg in self.io.recv(block):
            for m in unwrap(msg):  # a tokenizer may send several in one BatchBackendMsg
                self._process_msg(m)

    def _process_msg(self, msg: BaseBackendMsg) -> None:
        if isinstance(msg, UserMsg):
            req = self.add_request(msg.uid, msg.input_ids, msg.sampling_params, msg.prompt_leader)
            if req is not None and msg.stamps is not None:
                req.stamps = msg.stamps
                stamp(req.stamps, "scheduler_recv", req.arrived_at)
        elif isinstance(msg, AbortBackendMsg):
            self.abort(msg.uid)
        elif isinstance(msg, ExitMsg):
            self._exit = True
        else:
            raise TypeError(f"scheduler got an unexpected message: {msg!r}")

    def add_request(
        self, uid: int, input_ids: list[int], params: SamplingParams, prompt_leader: Optional[int] = None
    ) -> Optional[Req]:
        """Queue a request, or reject it at once if it can never run."""
        req = Req(uid=uid, input_ids=list(input_ids), sampling_params=params)
        error = self._validate(uid, input_ids, params) or self.grammars.attach(req)
        if error is not None:
            self.tracer.record(uid, "scheduler", "rejected", error=error)
            self.io.send([DetokenizeMsg(uid, -1, True, "abort", list(params.stop), error=error)])
            return None
        prompt_sharing.follow(req, self.reqs.get(prompt_leader))  # (n > 1) wait for the leader's prompt
        # Clamp to the context: a request that fits at admission can always finish.
        req.max_new_tokens = min(params.max_tokens, self.max_seq_len - len(input_ids))
        req.generator = make_generator(params, self.engine.device)
        req.arrived_at = time.monotonic()
        self.reqs[uid] = req
        self.waiting.append(req)
        self.tracer.record(uid, "scheduler", "queued", prompt_tokens=len(input_ids))
        return req

    def _validate(self, uid: int, input_ids: list[int], params: SamplingParams) -> Optional[str]:
        if uid in self.reqs:
            return f"duplicate request id {uid}"
        if not input_ids:
            return "the prompt is empty"
        if len(input_ids) >= self.max_seq_len:
            return (
                f"the prompt has {len(input_ids)} tokens, but at most {self.max_seq_len - 1} fit "
                f"(context and KV cache size), leaving room for one output token"
            )
        bad = [t for t in input_ids if not 0 <= t < self.vocab_size]
        if bad:
            return f"token id {bad[0]} is outside the vocabulary (size {self.vocab_size})"
        try:
            params.validate()
        except ValueError as e:
            return str(e)
        bad = [t for t in params.logit_bias if t >= self.vocab_size]
        if bad:
            return f"logit_bias: token id {bad[0]} is outside the vocabulary (size {self.vocab_size})"
        return None

    # ------------------------------------------------------------------ 2. schedule
    def _schedule_next_batch(self) -> Optional[Batch]:
        """Pick the next batch (`self.schedule_fn`, by default `schedule_next_batch`) and number it."""
        batch = self.schedule_fn(self)
        if batch is not None:
            self.batch_count += 1
            batch.batch_id = self.batch_count
            self.last_batch = batch
        return batch

    # --- admission: public, because the course's graders ask it (and hide it from answers) ---
    def outstanding_pages(self, reqs: Optional[list[Req]] = None) -> int:
        """Pages `reqs` (default: every admitted request) may still ask for, up to their max length."""
        total = 0
        for req in self.admitted() if reqs is None else reqs:
            final = len(req.input_ids) + req.max_new_tokens
            total += max(pages_for(final, self.cache.page_size) - self.cache.held_pages(req), 0)
        return total

    def admitted(self) -> list[Req]:
        """The requests that hold a page-table row: the running ones, and waiting ones part-way
        through their prompt."""
        return self.running + [r for r in self.waiting if r.table_idx >= 0]

    def try_admit(self, req: Req) -> bool:
        """Give `req` a page-table row if its whole run (prompt + max_new_tokens) is sure to fit.

        Reserving for the worst case up front means a running request never runs out of pages
        mid-decode, so the scheduler never has to pre-empt anyone.
        """
        if len(self.admitted()) >= self.max_running:
            return False
        if self.cache.page_table.num_free_rows == 0:
            return False  # (overlap loop) finished requests keep their row until their batch lands
        self.cache.admit(req)  # row + prefix lock; now counted in outstanding_pages()
        if self.outstanding_pages() > self.cache.num_available:
            self.cache.release(req, cache_it=False)  # undo: row and prefix lock back
            req.cached_len = req.prefix_len = 0
            return False
        self.prompt_tokens_total += len(req.input_ids)
        self.prefix_hit_tokens_total += req.prefix_len
        if req.prefix_len:
            self.tracer.record(req.uid, "scheduler", "prefix_hit", tokens=req.prefix_len)
        return True

    def _schedule_prefill(self, budget: Optional[int] = None) -> Optional[Batch]:
        """Prompt chunks of the waiting requests, head first, under `budget` tokens (default
        `max_prefill_tokens`)."""
        budget = self.max_prefill_tokens if budget is None else budget
        items: list[ScheduledReq] = []
        for req in list(self.waiting):
            if budget <= 0:
                break
            if req.table_idx >= 0 and req.remaining_prompt == 0:
                continue  # (overlap loop) its last prompt chunk is in flight; its token comes next
            if prompt_sharing.waits(req):
                break  # (n > 1) the same prompt is being computed: its pages come next step
            if req.table_idx < 0 and not self.try_admit(req):
                break  # first come, first served: nobody overtakes a request that does not fit yet
            chunk = min(req.remaining_prompt, budget)
            if req.queue_seconds is None:
                req.queue_seconds = time.monotonic() - req.arrived_at
                stamp(req.stamps, "admitted", req.arrived_at + req.queue_seconds)
            self.cache.reserve(req, req.cached_len + chunk)
            items.append(ScheduledReq(req, req.cached_len, chunk))
            budget -= chunk
            req.status = ReqStatus.PREFILLING
        if not items:
            return None
        return Batch("prefill", items)

    def _schedule_decode(self) -> Optional[Batch]:
        items = []
        reqs = self._decoding()
        # Tokens sampled by a batch still in flight (overlap loop only; 0 in normal_loop).
        aheads = [self.tokens_ahead(req) for req in reqs]
        # (speculative decoding) Drafts follow the newest token, so only when every request has
        # it on the host: a verify batch reads all its input tokens from there.
        drafting = not any(aheads)
        for req, ahead in zip(reqs, aheads):
            draft = self.speculator.drafts(req) if drafting else []
            # The newest token's K/V is computed now, at position total_len - 1 (then the drafts').
            self.cache.reserve(req, req.total_len + ahead + len(draft))
            items.append(ScheduledReq(req, req.total_len - 1 + ahead, 1 + len(draft), draft))
        if not items:
            return None
        return Batch("verify" if any(it.draft for it in items) else "decode", items)

    def _decoding(self) -> list[Req]:
        """The running requests that get a decode token this step (all of them in normal_loop)."""
        reqs = []
        for req in self.running:
            ahead = self.tokens_ahead(req)
            if ahead and len(req.output_ids) + ahead >= req.max_new_tokens:
                continue  # (overlap loop) its last token is already being computed
            reqs.append(req)
        return reqs

    def _schedule_mixed(self) -> Optional[Batch]:
        """(`config.mixed_chunk`) Prompt chunks and every running request's decode token in one
        batch, the chunks first; None when there is nothing to mix, so the step is scheduled as
        without the option.

        The decode tokens count against the token budget, as in SGLang's mixed chunk: the prompt
        chunks get `max_prefill_tokens` minus one token per decoding request. When those alone
        use the whole budget, no mixing: the prompt goes first, on its own, as it would without
        the option (so a waiting prompt is never starved by a large running set).
        """
        if not self.waiting:
            return None
        decoding = self._decoding()
        budget = self.max_prefill_tokens - len(decoding)
        if not decoding or budget <= 0:
            return None
        prefill = self._schedule_prefill(budget)
        if prefill is None:
            return None  # nobody can be admitted yet: a plain decode batch follows
        decode = self._schedule_decode()  # the same requests as `decoding`
        return Batch("mixed", prefill.items + decode.items)

    # ------------------------------------------------------------------ 3. launch, 4. land
    def launch(self, batch: Batch) -> InFlight:
        """Start `batch` on the engine (on CUDA the work is only queued) and return it in flight.

        Until it lands, the next batch may be scheduled (the overlap loop), so its new positions
        count as taken now: a prompt chunk's `cached_len` moves to its end, a decode token counts
        in `tokens_ahead`; and its requests are pinned (`cache.pin`): a release waits for the landing.
        """
        t0 = time.perf_counter()
        record = StepRecord.of(batch)
        self.cache.pin(batch.reqs)
        for it in batch.items:  # item by item: a mixed batch has prompt chunks and decode tokens
            if it.is_decode:
                self._ahead[id(it.req)] = self.tokens_ahead(it.req) + 1
            else:
                it.req.cached_len = it.end  # not to be scheduled again while in flight
        self._trace_scheduled(batch)
        return InFlight(batch, self.engine.launch_batch(batch), record, t0)

    def land(self, fl: InFlight) -> StepRecord:
        """Wait for the tokens of a batch in flight and process them (append, finish, reply)."""
        out = fl.pending.result()  # the only wait for the device in either loop
        batch = fl.batch
        for it in batch.items:
            if it.is_decode:
                self._ahead[id(it.req)] -= 1
        self._ahead = {key: n for key, n in self._ahead.items() if n}
        self.cache.unpin(batch.reqs)  # the device is done with this batch: releases it held back happen now
        self._process_results(batch, out, fl.record)  # (it skips requests aborted meanwhile)
        if batch.has_drafts:  # the newest tokens were decided on the host (engine/verify.py)
            got = [it.req for it in batch.items if it.req.uid in fl.record.next_tokens and not it.req.is_finished]
            self.engine.set_last_tokens([r.table_idx for r in got], [r.output_ids[-1] for r in got])
        fl.record.seconds = time.perf_counter() - fl.t0
        return fl.record

    def tokens_ahead(self, req: Req) -> int:
        """`req`'s decode tokens launched and not landed yet (0 between the steps of normal_loop)."""
        return self._ahead.get(id(req), 0)

    def must_land_first(self, batch: Batch) -> bool:  # (overlap loop) see Speculator.must_land_first
        return self.speculator.must_land_first(batch)

    def _trace_scheduled(self, batch: Batch) -> None:
        mixed = batch.phase == "mixed"
        for it in batch.items:
            # In a mixed batch, each request's own phase: it decodes, or prefills a prompt chunk.
            phase = ("decode" if it.is_decode else "prefill") if mixed else batch.phase
            self.tracer.record(
                it.req.uid,
                "scheduler",
                "scheduled",
                phase=phase,
                batch=batch.batch_id,
                start=it.start,
                tokens=it.num_tokens,
                **({"mixed": True} if mixed else {}),
            )

    # ------------------------------------------------------------------ 4. results
    def _process_results(self, batch: Batch, out: ForwardOutput, record: StepRecord) -> None:
        replies: list[DetokenizeMsg] = []
        for it, tokens, logprobs in zip(batch.items, out.tokens, out.logprobs):
            req = it.req
            if req.is_finished:
                continue  # aborted while the batch was in flight
            self.advance(it, sampled=bool(tokens))
            if not tokens:
                continue  # a chunk of a long prompt: no token yet, it stays at the head of the queue
            if it.draft:  # `tokens`: the model's own at the k+1 positions; the verify step keeps some
                tokens = self.speculator.verified(req, it.draft, tokens, record)
            for token, lp in zip(tokens, logprobs):
                replies.append(self._add_token(req, token, lp, record))
                if req.is_finished:
                    break  # (after a verify) the rest of the run never happened
        if replies:
            now = time.monotonic()
            for msg in replies:  # (first tokens) the last point of their path in this process
                stamp(msg.stamps, "scheduler_sent", now)
            self.io.send(replies)

    def advance(self, it: ScheduledReq, sampled: bool) -> None:
        """`it`'s tokens have K/V now; with `sampled` (a token came back), a prompt's last chunk
        takes its request from the waiting queue to the running set. (The schedule graders replay
        their batches through this, with made-up tokens: `grading/fixtures.py`.)"""
        req = it.req
        # max(): under overlap_loop a later chunk of this prompt may already be launched. A
        # draft's position counts only once the draft is accepted (`speculator.verified`).
        req.cached_len = max(req.cached_len, it.end - len(it.draft))
        if sampled and not it.is_decode:
            self.waiting.remove(req)
            self.running.append(req)
            req.status = ReqStatus.DECODING
            prompt_sharing.prompt_done(req, self.cache)  # (n > 1) the other answers reuse its pages

    def _add_token(self, req: Req, token: int, logprobs, record: StepRecord) -> DetokenizeMsg:
        """Append one new token to `req`, check whether it finishes it, and say so to the detokenizer."""
        req.output_ids.append(token)
        self.generated_tokens_total += 1
        record.next_tokens[req.uid] = token
        self.tracer.record(req.uid, "scheduler", "token", token=token, index=len(req.output_ids) - 1)
        # A grammar decides first (complete, or refused); then the finish check (exercise 1).
        reason = self.grammars.finish_reason(req, token) or self.finish_fn(req, self.eos_ids, self._decode_tail)
        if reason is not None:
            self._finish(req, reason)
            record.finished[req.uid] = reason
        return token_reply(req, token, logprobs)

    def _decode_tail(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _finish(self, req: Req, reason: str) -> None:
        req.finish_reason = reason
        req.status = ReqStatus.FINISHED
        self.running.remove(req)
        self.cache.release(req, cache_it=True)
        del self.reqs[req.uid]
        self.tracer.record(req.uid, "scheduler", "finished", reason=reason, output_tokens=len(req.output_ids))

    # ------------------------------------------------------------------ abort
    def abort(self, uid: int) -> bool:
        """Stop `uid` wherever it is (waiting, mid chunked prefill, decoding) and free its memory."""
        done = self.abort_fn(self, uid)
        if done:
            self.tracer.record(uid, "scheduler", "aborted")
        return done

    # ------------------------------------------------------------------ the loop
    @property
    def is_idle(self) -> bool:
        return not self.waiting and not self.running

    def step(self, block: bool = False) -> Optional[StepRecord]:
        """One iteration: receive, schedule, launch, land. None if there was no work."""
        assert not self.has_in_flight, "step() cannot follow overlap_step() while a batch is in flight"
        batch = self.schedule(block)
        if batch is None:
            return None
        return self.run_batch(batch)

    def schedule(self, block: bool = False) -> Optional[Batch]:
        """The first half of a step: receive messages and pick the next batch (not run yet).

        Split out so the course's stepper can show the batch *about* to run; pass it to
        `run_batch` (abort in between is fine: an aborted request's result is dropped).
        """
        self.receive(block=block and self.is_idle)
        batch = self._schedule_next_batch()
        if batch is None:
            self.send_stats()
        return batch

    def run_batch(self, batch: Batch) -> StepRecord:
        """The second half of a step: launch the batch and land it."""
        live = batch.without_finished()  # an abort between `schedule` and here drops its request
        record = self.land(self.launch(live)) if live is not None else StepRecord.of(batch)
        self.send_stats()
        return record

    def normal_loop(self) -> None:
        """Run until an `ExitMsg` arrives. Blocks on the inbox while there is nothing to do."""
        while not self._exit:
            self.step(block=True)

    def run_loop(self) -> None:
        """A scheduler process's main loop: `overlap_loop` if `use_overlap`, else `normal_loop`."""
        if self.use_overlap:
            self.overlap_loop()
        else:
            self.normal_loop()

    def overlap_step(self, block: bool = False) -> Optional[StepRecord]:
        """One iteration of `overlap_loop`: schedule and launch batch N+1, then land batch N
        (`OverlapLoop.step`). Returns the record of the batch that landed, if any."""
        return self.overlap.step(block)

    def overlap_loop(self) -> None:
        """Like `normal_loop`, with batch N+1 prepared while batch N runs (CUDA's default)."""
        self.overlap.run(until=lambda: self._exit)

    @property
    def has_in_flight(self) -> bool:
        return self.overlap.in_flight is not None

    @property
    def in_flight_batch(self) -> Optional[Batch]:
        """(overlap loop) The batch launched and not landed yet: its requests' pages are pinned."""
        return self.overlap.in_flight.batch if self.overlap.in_flight is not None else None

    @property
    def use_overlap(self) -> bool:
        """`config.overlap`, where None means: on with CUDA, off on CPU."""
        if self.config.overlap is None:
            return self.engine.device.type == "cuda"
        return bool(self.config.overlap)

    def run_until_idle(self, max_steps: int = 1_000_000, overlap: bool = False) -> list[StepRecord]:
        records = []
        for _ in range(max_steps):
            rec = self.overlap_step() if overlap else self.step()
            if rec is None and self.is_idle and not self.has_in_flight:
                break
            if rec is not None:
                records.append(rec)
        return records

    # ------------------------------------------------------------------ inspection
    @property
    def verify_fn(self) -> Callable[[VerifyRequest, list[int], list[int]], VerifyResult]:
        """(speculative decoding) The verify step the speculator applies; exercise 8 replaces it."""
        return self.speculator.verify_fn

    @verify_fn.setter
    def verify_fn(self, fn: Callable[[VerifyRequest, list[int], list[int]], VerifyResult]) -> None:
        self.speculator.verify_fn = fn

    def stats(self) -> SchedulerStats:
        """The gauges of /metrics and the detail of /dashboard (`stats.py`)."""
        return collect_stats(self)

    def send_stats(self) -> None:
        """Send `stats()` to the server if anything changed since the last message, at most once
        every `config.stats_interval` seconds (`StatsPacer`). Called after every step and
        whenever the scheduler wakes up idle, so the state after a burst's last change goes out."""
        if self.io.wants_stats:
            self.stats_pacer.send_if_due(self, self.io.send_stats)


def token_reply(req: Req, token: int, logprobs) -> DetokenizeMsg:
    """The message that carries one new token of `req` to the detokenizer (with its logprobs where
    the request asked, and, with its first token, how long it queued)."""
    msg = DetokenizeMsg(req.uid, token, req.is_finished, req.finish_reason, list(req.sampling_params.stop))
    msg.cached_tokens = req.prefix_len
    if len(req.output_ids) == 1:
        msg.queue_seconds = req.queue_seconds
        stamp(req.stamps, "first_token")
        msg.stamps, req.stamps = req.stamps, None
    if logprobs is not None:
        msg.logprob = logprobs.logprob
        msg.top_logprobs = [list(pair) for pair in logprobs.top]
    return msg
