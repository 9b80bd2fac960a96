"""The whole server in one process, one step at a time: `LocalServer`.

Where this sits on the request path: it *is* the request path, without processes or sockets. The
pieces are the ones `python -m minisgl_edu.serve` runs, connected by in-memory queues instead of
ZeroMQ:

    submit()  --TokenizeMsg-->  TokenizeWorker (tokenizer role: encode_prompt, validation)
              --UserMsg------>  Scheduler (+ Engine, KV cache)           [one step() = one iteration]
              --DetokenizeMsg-> TokenizeWorker (detokenizer role: IncrementalDetokenizer)
              --UserReply---->  _listen() (the API server's `listen`)   -> result(uid).text, "[DONE]"
    abort()   --AbortMsg----->  tokenizer --AbortBackendMsg--> Scheduler.abort (pages freed)

Because nothing runs on its own, a notebook can stop between any two iterations and look at the
waiting queue, the batch about to run, the page table and the trace. `start()` runs the same
`step()` in a background thread instead, with `pause()` / `resume()` for live widgets.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from minisgl_edu.core import Batch, SamplingParams
from minisgl_edu.message import (
    AbortBackendMsg,
    AbortMsg,
    DetokenizeMsg,
    TokenizeMsg,
    UserMsg,
    UserReply,
    unwrap,
)
from minisgl_edu.runtime.snapshot import BatchItemView, BatchView, RequestView, Snapshot
from minisgl_edu.scheduler import QueueIO, Scheduler, SchedulerConfig, StepRecord
from minisgl_edu.trace import TraceEvent, Tracer


@dataclass
class RequestResult:
    """What the client of one request has seen so far (the API server's view of it)."""

    uid: int
    prompt: Any  # as submitted: text, chat messages or token ids
    sampling_params: SamplingParams
    prompt_token_ids: list[int] = field(default_factory=list)  # known once the tokenizer ran
    token_ids: list[int] = field(default_factory=list)  # generated so far
    chunks: list[str] = field(default_factory=list)  # each UserReply's incremental_output
    finish_reason: Optional[str] = None  # None while running; "stop" | "length" | "abort"
    error: Optional[str] = None  # why the request was rejected, if it was
    logprobs: list[dict] = field(default_factory=list)  # per token, if asked (UserReply.logprobs)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


class _Inbox:
    """A queue with the two calls `TokenizeWorker` expects of its sockets (`put`, `get_all_nowait`)."""

    def __init__(self) -> None:
        self._q: queue.Queue = queue.Queue()

    def put(self, msg: Any) -> None:
        self._q.put(msg)

    def get_all_nowait(self) -> list[Any]:
        out = []
        while True:
            try:
                out.append(self._q.get_nowait())
            except queue.Empty:
                return out

    def qsize(self) -> int:
        return self._q.qsize()


class _TracedSender:
    """Wraps one queue's `put` so every message sent through it lands in the trace too.

    The worker code stays the server's; only the wire is different, and the wire is where a
    message is "sent", so this is where the trace records it.
    """

    def __init__(
        self, put: Callable[[Any], None], tracer: Tracer, component: str, on_msg: Callable[[Any], None] = lambda m: None
    ) -> None:
        self._put, self.tracer, self.component, self.on_msg = put, tracer, component, on_msg

    def put(self, msg: Any) -> None:
        for m in unwrap(msg):
            self.on_msg(m)
            if isinstance(m, UserMsg):
                self.tracer.record(m.uid, self.component, "UserMsg sent", prompt_tokens=len(m.input_ids))
            elif isinstance(m, AbortBackendMsg):
                self.tracer.record(m.uid, self.component, "AbortBackendMsg sent")
            elif isinstance(m, UserReply):
                data: dict[str, Any] = {"text": m.incremental_output, "finished": m.finished}
                if m.error:
                    data["error"] = m.error
                self.tracer.record(m.uid, self.component, "UserReply sent", **data)
        self._put(msg)


class _TracedQueueIO(QueueIO):
    """The scheduler's in-memory I/O, recording each `DetokenizeMsg` it sends."""

    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self.tracer = tracer

    def send(self, msgs: list[DetokenizeMsg]) -> None:
        for m in msgs:
            self.tracer.record(m.uid, "scheduler", "DetokenizeMsg sent", token=m.next_token, finished=m.finished)
        super().send(msgs)


class LocalServer:
    """Tokenizer, scheduler + engine, detokenizer and a tiny frontend in one process.

    Keyword arguments other than `model`, `device` and `trace` go to `SchedulerConfig`
    (`page_size`, `num_pages`, `cache`, `max_running_requests`, `max_prefill_tokens`, ...).
    """

    def __init__(self, model: str = "smollm2-135m", device: str = "auto", trace: bool = True, **config: Any) -> None:
        from minisgl_edu.tokenizer.server import DetokenizeManager, TokenizeManager, TokenizeWorker

        self.config = SchedulerConfig(model=model, device=device, **config)
        self.tracer = Tracer(enabled=trace)
        self.io = _TracedQueueIO(self.tracer)  # scheduler inbox (UserMsg, AbortBackendMsg) + outbox (DetokenizeMsg)
        self.scheduler = Scheduler(self.config, self.io, tracer=self.tracer)
        self.engine = self.scheduler.engine
        self.tokenizer = self.scheduler.tokenizer
        self.tokenizer_inbox = _Inbox()  # TokenizeMsg, AbortMsg from the frontend
        self.frontend_inbox = _Inbox()  # UserReply from the tokenizer (errors) and the detokenizer
        tokenize = TokenizeManager(self.tokenizer, self.scheduler.max_seq_len, self.scheduler.vocab_size)
        self._tokenizer_worker = TokenizeWorker(
            self.tokenizer_inbox,
            _TracedSender(self.frontend_inbox.put, self.tracer, "tokenizer"),
            _TracedSender(self.io.put, self.tracer, "tokenizer", self._saw_backend_msg),
            tokenize,
            None,
        )
        self._detokenizer_worker = TokenizeWorker(
            None,
            _TracedSender(self.frontend_inbox.put, self.tracer, "detokenizer"),
            None,
            None,
            DetokenizeManager(self.tokenizer),
        )
        self.results: dict[int, RequestResult] = {}
        self.on_step: list[Callable[[Snapshot], None]] = []  # called after every step (widgets)
        self.steps = 0
        self._uids = itertools.count()
        self._planned: Optional[Batch] = None
        self._last: Optional[BatchView] = None
        # One lock around every step: the background thread and a notebook cell never interleave.
        self._lock = threading.RLock()
        self._thread: Optional[threading.Thread] = None
        # Held by the background loop for a whole step, callbacks included: pause() waits on it.
        self._busy = threading.Lock()
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._wake = threading.Event()

    # ------------------------------------------------------------------ the frontend's side
    def submit(self, prompt: Any, params: Optional[SamplingParams] = None) -> int:
        """Send a request, as the API server does on POST: a new uid and a `TokenizeMsg`.

        With `params.n` > 1, n requests for the same prompt: the returned uid and the n - 1 after it.
        """
        params = params or SamplingParams()
        with self._lock:
            uid = next(self._uids)
            more = [next(self._uids) for _ in range(params.n - 1)]
            for u in [uid, *more]:
                self.results[u] = RequestResult(u, prompt, params)
        kind = "text" if isinstance(prompt, str) else "chat" if prompt and isinstance(prompt[0], dict) else "token ids"
        self.tracer.record(uid, "api_server", "received", prompt=kind, max_tokens=params.max_tokens)
        self.tokenizer_inbox.put(TokenizeMsg(uid=uid, text=prompt, sampling_params=params, more_uids=more))
        self.tracer.record(uid, "api_server", "TokenizeMsg sent")
        self._wake.set()
        return uid

    def abort(self, uid: int) -> bool:
        """Cancel `uid` the way a client disconnect does; True if it was still running.

        The `AbortMsg` takes the real path at once (tokenizer, then the scheduler's receive, which
        frees the pages), so the page map is clean when this returns.
        """
        with self._lock:
            res = self.results.get(uid)
            if res is None or res.finished:
                return False
            self.tracer.record(uid, "api_server", "AbortMsg sent")
            self.tokenizer_inbox.put(AbortMsg(uid=uid))
            self._run_tokenizer()
            # The same receive the loop does first in every iteration: AbortBackendMsg -> abort().
            self.scheduler.receive()
            self._run_detokenizer()
            self._listen()
            return True

    def result(self, uid: int) -> RequestResult:
        return self.results[uid]

    def pop_result(self, uid: int) -> RequestResult:
        """The result, forgotten by the server (long-running users such as `LLM` call this)."""
        with self._lock:
            return self.results.pop(uid)

    def trace(self, uid: int) -> list[TraceEvent]:
        return self.tracer.events(uid)

    # ------------------------------------------------------------------ one iteration
    def plan(self) -> Snapshot:
        """Let the scheduler choose the next batch without running it (the stepper shows it).

        The next `step()` runs exactly this batch. Requests submitted in between join the step after.
        """
        with self._lock:
            self._run_tokenizer()
            if self._planned is None:
                self._planned = self.scheduler.schedule()
            return self._snapshot()

    def step(self) -> Snapshot:
        """One iteration of the whole path: tokenizer, scheduler (`schedule` + `run_batch`),
        detokenizer, frontend. Returns what it looks like afterwards."""
        with self._lock:
            self._run_tokenizer()
            batch, self._planned = self._planned or self.scheduler.schedule(), None
            record = self.scheduler.run_batch(batch) if batch is not None else None
            tokens = self._run_detokenizer()
            self._listen()
            if record is not None:
                self.steps += 1
            self._last = self._with_text(_view(record, tokens))
            snap = self._snapshot()
        for callback in list(self.on_step):
            callback(snap)
        return snap

    def is_idle(self) -> bool:
        with self._lock:
            return (
                self.scheduler.is_idle
                and self._planned is None
                and not self.tokenizer_inbox.qsize()
                and self.io.inbox.empty()
                and self.io.outbox.empty()
                and not self.frontend_inbox.qsize()
            )

    def run_until_idle(self, max_steps: int = 100_000, timeout: float = 600.0) -> Snapshot:
        """Step until every submitted request is done. With the background loop running, wait for it."""
        if self._thread is not None and not self._paused.is_set():
            deadline = time.monotonic() + timeout
            while not self.is_idle():
                if time.monotonic() > deadline:
                    raise TimeoutError("the background loop did not become idle")
                time.sleep(0.005)
            with self._busy:  # the last step's on_step callbacks have run too
                return self.snapshot()
        for _ in range(max_steps):
            if self.is_idle():
                break
            self.step()
        return self.snapshot()

    def generate(self, prompt: Any, params: Optional[SamplingParams] = None) -> RequestResult:
        uid = self.submit(prompt, params)
        self.run_until_idle()
        return self.result(uid)

    def stream(self, prompt: Any, params: Optional[SamplingParams] = None) -> Iterator[str]:
        """Yield the text of one request piece by piece, as an SSE client would receive it."""
        uid = self.submit(prompt, params)
        sent = 0
        while True:
            res = self.results[uid]
            while sent < len(res.chunks):
                if res.chunks[sent]:
                    yield res.chunks[sent]
                sent += 1
            if res.finished:
                return
            if self._thread is None or self._paused.is_set():
                self.step()
            else:
                time.sleep(0.005)

    def reset(self) -> None:
        """Abort everything, then start over with an empty KV cache, trace and uid counter.

        The engine (model weights, KV pool) is kept; a fresh `Scheduler` on it gets a fresh page
        allocator and prefix cache, which is only safe because every request was aborted first.
        """
        with self._lock:
            for uid, res in list(self.results.items()):
                if not res.finished:
                    self.abort(uid)
            self._planned = None
            self.scheduler = Scheduler(
                self.config, self.io, engine=self.engine, tokenizer=self.tokenizer, tracer=self.tracer
            )
            self.io.drain()
            self.frontend_inbox.get_all_nowait()
            self.results.clear()
            self.tracer.clear()
            self.steps = 0
            self._last = None
            self._uids = itertools.count()

    # ------------------------------------------------------------------ the message pumps
    def _run_tokenizer(self) -> None:
        msgs = self.tokenizer_inbox.get_all_nowait()
        for m in msgs:
            self.tracer.record(m.uid, "tokenizer", f"{type(m).__name__} received")
        if msgs:
            self._tokenizer_worker.handle(msgs)

    def _saw_backend_msg(self, msg: Any) -> None:
        if isinstance(msg, UserMsg) and msg.uid in self.results:
            self.results[msg.uid].prompt_token_ids = list(msg.input_ids)

    def _run_detokenizer(self) -> dict[int, list[int]]:
        """Hand the scheduler's `DetokenizeMsg`s to the detokenizer; returns the new tokens by uid."""
        msgs = self.io.drain()
        tokens: dict[int, list[int]] = {}
        for m in msgs:
            res = self.results.get(m.uid)
            if m.next_token >= 0:
                tokens.setdefault(m.uid, []).append(m.next_token)
                if res is not None:
                    res.token_ids.append(m.next_token)
        if msgs:
            self._detokenizer_worker.handle(msgs)
        return tokens

    def _listen(self) -> None:
        """The API server's `listen`: route each UserReply to its request by uid."""
        for msg in self.frontend_inbox.get_all_nowait():
            for m in unwrap(msg):
                res = self.results.get(getattr(m, "uid", -1))
                if not isinstance(m, UserReply) or res is None:
                    continue  # stats, or a request already forgotten
                res.chunks.append(m.incremental_output)
                res.logprobs.extend(m.logprobs)
                if m.error:
                    res.error = m.error
                    self.tracer.record(m.uid, "api_server", "error", error=m.error)
                if m.finished:
                    res.finish_reason = m.finish_reason or "stop"
                    # A cancelled request has no client left to read a [DONE].
                    event = "closed" if res.finish_reason == "abort" else "[DONE]"
                    self.tracer.record(m.uid, "api_server", event, finish_reason=res.finish_reason)

    # ------------------------------------------------------------------ background mode
    def start(self, paused: bool = False) -> None:
        """Run `step()` in a background thread until `stop()`; `pause()` / `resume()` in between."""
        if self._thread is not None:
            return
        self._stop.clear()
        if paused:
            self._paused.set()
        self._thread = threading.Thread(target=self._loop, name="minisgl-runtime-loop", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._busy:
                run = not self._paused.is_set() and not self.is_idle()
                if run:
                    self.step()
            if not run:
                # Nothing to do: sleep until submit()/resume() wakes us (or a short timeout passes).
                self._wake.wait(0.05)
                self._wake.clear()

    def pause(self) -> None:
        """Stop the background loop between two steps; returns once no step (nor its
        on_step callbacks) is running."""
        self._paused.set()
        with self._busy:
            pass

    def resume(self) -> None:
        self._paused.clear()
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    @property
    def background(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._thread = None
        self._paused.clear()

    # ------------------------------------------------------------------ inspection
    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> Snapshot:
        s = self.scheduler
        pages = s.cache.snapshot()
        requests = {}
        for uid, res in self.results.items():
            req = s.reqs.get(uid)
            if res.finished:
                status = "finished"
            elif req is None:
                status = "tokenizing"  # still in a queue before the scheduler
            else:
                status = req.status.value
            requests[uid] = RequestView(
                uid=uid,
                status=status,
                prompt_tokens=len(req.input_ids) if req else len(res.prompt_token_ids),
                cached_tokens=req.cached_len if req else 0,
                output_tokens=len(res.token_ids),
                text=res.text,
                finish_reason=res.finish_reason,
                pages=pages.rows.get(uid, []),
            )
        return Snapshot(
            steps=self.steps,
            batch=self._last,
            next_batch=self._with_text(BatchView.planned(self._planned)) if self._planned is not None else None,
            waiting=[r.uid for r in s.waiting],
            running=[r.uid for r in s.running],
            requests=requests,
            queues={
                "tokenizer": self.tokenizer_inbox.qsize(),
                "scheduler": self.io.inbox.qsize(),
                "detokenizer": self.io.num_pending(),
                "api_server": self.frontend_inbox.qsize(),
            },
            pages=pages,
            free_pages=s.cache.num_available,
        )

    def _with_text(self, view: Optional[BatchView]) -> Optional[BatchView]:
        """`view` with the text of each draft, and of the tokens of the requests that drafted (the
        widgets show a verify batch with them); other batches need none."""
        if view is not None and view.has_drafts:
            ids = {t for it in view.items if it.draft for t in it.draft + it.tokens}
            view.token_text = {t: self.tokenizer.decode([t]) for t in sorted(ids)}
        return view

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _view(record: Optional[StepRecord], tokens: dict[int, list[int]]) -> Optional[BatchView]:
    """The widgets' view of a step that ran; `tokens`: the new tokens each request sent this step."""
    if record is None:
        return None
    items = []
    for u, s, n in record.items:
        item = BatchItemView(u, s, n, u in record.decode_uids)
        if u in record.drafts:
            item.draft = list(record.drafts[u])
            item.accepted = list(record.accepted.get(u, []))
            item.freed_pages = list(record.freed_pages.get(u, []))
        item.tokens = list(tokens.get(u, []))
        items.append(item)
    return BatchView(record.batch_id, record.phase, items, dict(record.next_tokens), dict(record.finished))
