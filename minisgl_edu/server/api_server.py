"""The API server: OpenAI-compatible HTTP in the main process, the two ends of the request path.

Where this sits on the request path: first and last.

    client --HTTP--> v1_chat_completions: new_user() gives a uid, send_one(TokenizeMsg) to a tokenizer
                     ... tokenizer -> scheduler -> detokenizer ...
    listen() <--UserReply-- detokenizer: put the reply in ack_map[uid], which wakes that request
    the request's coroutine turns replies into SSE chunks ... `data: [DONE]`
    client goes away: AbortMsg(uid) to the tokenizer, which tells the scheduler to free the request

One coroutine per HTTP request waits on its own queue in `ack_map`; one `listen` coroutine
receives every reply and hands it to the right queue by uid. Nothing here blocks the event loop,
so thousands of open streams cost little while the scheduler process does the work.

Endpoints: POST /v1/chat/completions, POST /v1/completions (stream or not), GET /v1/models,
GET /health, GET /metrics (Prometheus text). Errors use OpenAI's shape,
`{"error": {"message", "type", "param", "code"}}`, with a 4xx status for a bad request and 503
when a worker process has died. The shapes of bodies and chunks are in `protocol.py`.

Limits that keep one client (or many) from hurting the others (see docs/reliability.md):

* `--max-request-bytes`: a larger body gets 413 before it is parsed; JSON nested deeper than
  `MAX_JSON_DEPTH` or a body that is not UTF-8 gets 400 (`BodyLimitMiddleware`).
* `--max-queue`: at most `max_running_requests + max_queue` generation requests are in the server
  at once; the next one gets 503 with `Retry-After` at once instead of waiting without bound.
* `--request-timeout`: a request that has not finished after that many seconds (waiting included)
  is aborted, exactly like a client that hung up, and gets 504 (or an error event in a stream).
* `--api-key`: checked in constant time on every route except the public ones (`PUBLIC_PATHS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import logging
import re
import signal
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Optional, Union

from fastapi import Request  # module level: FastAPI resolves the handlers' annotations here

from minisgl_edu.message import AbortMsg, BatchFrontendMsg, SchedulerStatsMsg, TokenizeMsg, UserReply
from minisgl_edu.server.protocol import (
    ERROR_RESPONSES,
    APIError,
    ChatCompletionRequest,
    CompletionRequest,
    GenerateRequest,
    ResponseShape,
    finish_reason_of,
    render_metrics,
    service_unavailable,
    sse,
)

logger = logging.getLogger("minisgl.api")

POLL_INTERVAL = 0.5  # seconds: how often a waiting request checks its client and its deadline
MAX_JSON_DEPTH = 32  # the deepest valid body is 4 levels ({"messages": [{"content": [{...}]}]})
PUBLIC_PATHS = frozenset({"/", "/health", "/metrics", "/openapi.json"})  # no API key needed


# ---------------------------------------------------------------- the frontend state


def _unwrap(msg: Any) -> list[Any]:
    return [m for x in msg.data for m in _unwrap(x)] if isinstance(msg, BatchFrontendMsg) else [msg]


class FrontendState:
    """The API server's side of the sockets, and who is waiting for which uid."""

    def __init__(self, addrs: Any, workers: list, initial_stats: Optional[dict] = None,
                 max_in_flight: Optional[int] = None, request_timeout: Optional[float] = None) -> None:
        import zmq.asyncio

        from minisgl_edu.server.ipc import ZmqAsyncPullQueue, ZmqAsyncPushQueue

        self.ctx = zmq.asyncio.Context()
        self.send_tokenizer = [ZmqAsyncPushQueue(self.ctx, a) for a in addrs.tokenizers]
        self.recv_tokenizer = ZmqAsyncPullQueue(self.ctx, addrs.frontend, bind=True)  # replies from the detokenizer
        self.workers = workers
        self.uid_counter = itertools.count()
        self.ack_map: dict[int, asyncio.Queue[UserReply]] = {}  # uid -> replies not yet consumed
        self.stats: dict = dict(initial_stats or {})
        self.dead_worker: Optional[str] = None  # set (to a message naming it) when a worker died
        self.shutting_down: Optional[str] = None  # set on Ctrl+C / SIGTERM
        self.max_in_flight = max_in_flight  # running + queued generation requests; None: no limit
        self.request_timeout = request_timeout  # seconds; None: no limit
        self._background: set[asyncio.Task] = set()

    def new_user(self) -> int:
        """A fresh uid, and the queue its replies will arrive in."""
        uid = next(self.uid_counter)
        self.ack_map[uid] = asyncio.Queue()
        return uid

    async def send_one(self, msg: Union[TokenizeMsg, AbortMsg]) -> None:
        # Always the same tokenizer for one uid: its AbortMsg cannot overtake its TokenizeMsg.
        await self.send_tokenizer[msg.uid % len(self.send_tokenizer)].put(msg)

    def finish_user(self, uid: int) -> None:
        self.ack_map.pop(uid, None)

    def abort_user(self, uid: int) -> None:
        """The client is gone before its request finished: free it in the scheduler.

        Synchronous on purpose: it is called from `finally` blocks of cancelled coroutines, where
        an `await` would be cancelled again. The send runs as its own task.
        """
        if self.ack_map.pop(uid, None) is None:
            return  # finished, or already aborted
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called during interpreter shutdown: the scheduler is stopping anyway
            return
        task = loop.create_task(self.send_one(AbortMsg(uid=uid)))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def listen(self) -> None:
        """Receive every reply from the detokenizer (and tokenizers) and wake the request it belongs to."""
        while True:
            try:
                msg = await self.recv_tokenizer.get()
            except asyncio.CancelledError:
                raise
            except Exception:  # one undecodable message must not stop all requests
                logger.exception("listen: bad message")
                continue
            for m in _unwrap(msg):
                if isinstance(m, UserReply):
                    queue = self.ack_map.get(m.uid)
                    if queue is not None:  # None: the client already left, drop it
                        queue.put_nowait(m)
                elif isinstance(m, SchedulerStatsMsg):
                    self.stats = m.stats

    async def watch_workers(self, on_death: Callable[[str], None], interval: float = 0.2) -> None:
        """Notice a dead worker: fail every waiting request (503) and tell the server to stop."""
        while self.dead_worker is None:
            await asyncio.sleep(interval)
            if self.shutting_down is not None:
                return  # we are stopping anyway: workers exiting now is expected
            for w in self.workers:
                if not w.process.is_alive():
                    if w.process.exitcode in (-signal.SIGTERM, -signal.SIGINT):
                        # SIGTERM sent to the whole process group (`timeout`, `kill -- -PGID`,
                        # systemd) reaches the workers and us at once: give our own handler a
                        # moment to say so before calling it a crash.
                        await asyncio.sleep(interval)
                        if self.shutting_down is not None:
                            return
                    self.dead_worker = w.describe_exit()
                    break
        self.fail_all(self.dead_worker)
        on_death(self.dead_worker)

    def fail_all(self, message: str) -> None:
        """Wake every waiting request with an error (its client gets a 503 or an error event)."""
        for uid, queue in list(self.ack_map.items()):
            queue.put_nowait(UserReply(uid=uid, incremental_output="", finished=True, finish_reason="abort",
                                       error=message))

    def begin_shutdown(self) -> None:
        """Ctrl+C / SIGTERM: end open streams now instead of letting uvicorn cancel them later."""
        if self.shutting_down is None:
            self.shutting_down = "the server is shutting down"
            # No aborts needed: the scheduler is about to get an ExitMsg anyway.
            self.fail_all(self.shutting_down)

    def close(self) -> None:
        for q in self.send_tokenizer:
            q.close()
        self.recv_tokenizer.close()
        self.ctx.term()


# ---------------------------------------------------------------- one generation


class ClientDisconnected(Exception):
    pass


class RequestTimedOut(Exception):
    pass


@dataclass
class Generation:
    """What the API server knows about one request while it runs."""

    uid: int
    num_prompt_tokens: int = 0
    num_output_tokens: int = 0
    finish_reason: Optional[str] = None
    done: bool = False  # the last reply arrived: no abort needed
    deadline: Optional[float] = None  # time.monotonic() after which the request is aborted
    next_client_check: float = 0.0  # time.monotonic() when to ask again whether the client left

    def usage(self) -> dict:
        return {"prompt_tokens": self.num_prompt_tokens, "completion_tokens": self.num_output_tokens,
                "total_tokens": self.num_prompt_tokens + self.num_output_tokens}


async def next_reply(state: FrontendState, gen: Generation, request: Any = None) -> UserReply:
    """The next reply of `gen` that carries text, the end, or an error.

    The tokenizer's reply with the prompt length carries none of those: it is merged into `gen`.
    With `request`, also notice a client that disconnects while we wait (non-streaming requests;
    for streams, Starlette cancels the generator instead).
    """
    queue = state.ack_map.get(gen.uid)
    if queue is None:
        raise ClientDisconnected()
    while True:
        if request is None and gen.deadline is None:
            reply = await queue.get()
        else:
            # Check the client and the deadline every POLL_INTERVAL by the clock, not only when no
            # reply came for that long: a running request gets a token every few milliseconds, and
            # its client may have left long ago.
            now = time.monotonic()
            if gen.deadline is not None and now >= gen.deadline:
                raise RequestTimedOut()
            if request is not None and now >= gen.next_client_check:
                gen.next_client_check = now + POLL_INTERVAL
                if await request.is_disconnected():
                    raise ClientDisconnected()
            if not queue.empty():
                reply = queue.get_nowait()
            else:
                wait = POLL_INTERVAL if gen.deadline is None else min(POLL_INTERVAL, gen.deadline - now)
                try:
                    reply = await asyncio.wait_for(queue.get(), timeout=wait)
                except asyncio.TimeoutError:
                    continue
        gen.num_prompt_tokens = max(gen.num_prompt_tokens, reply.num_prompt_tokens)
        gen.num_output_tokens = max(gen.num_output_tokens, reply.num_output_tokens)
        if reply.finished or reply.error:
            gen.done = True
            gen.finish_reason = reply.finish_reason
            if not reply.error and gen.num_prompt_tokens == 0:
                await _await_prompt_length(queue, gen)
            return reply
        if reply.incremental_output:
            return reply


async def _await_prompt_length(queue: asyncio.Queue, gen: Generation) -> None:
    # The prompt-length reply comes from the tokenizer, the tokens from the detokenizer: two pipes
    # into one socket, so under load the last token can (rarely) arrive first. It is on its way.
    with contextlib.suppress(asyncio.TimeoutError):
        while gen.num_prompt_tokens == 0:
            reply = await asyncio.wait_for(queue.get(), timeout=1.0)
            gen.num_prompt_tokens = reply.num_prompt_tokens


def timeout_error(state: FrontendState) -> APIError:
    return APIError(504, f"the request did not finish within {state.request_timeout:g} s (--request-timeout); "
                    "it was aborted", type="timeout_error", code="request_timeout")


def busy_error(state: FrontendState) -> APIError:
    return APIError(503, f"the server is busy: {state.max_in_flight} requests are running or queued; "
                    "retry later", type="service_unavailable", code="queue_full", headers={"Retry-After": "1"})


def reply_error(state: FrontendState, reply: UserReply) -> APIError:
    if state.dead_worker is not None:
        return service_unavailable(f"the server is shutting down: {state.dead_worker}")
    if state.shutting_down is not None:
        return APIError(503, state.shutting_down, type="service_unavailable", code="shutting_down")
    return APIError(400, reply.error or "request failed", code="invalid_prompt")


async def generate(state: FrontendState, request: Any, prompt: Any, body: GenerateRequest, shape: ResponseShape):
    """Send one request down the path and turn its replies into an OpenAI response."""
    from fastapi.responses import JSONResponse, Response, StreamingResponse

    params = body.sampling_params()
    if state.dead_worker is not None or state.shutting_down is not None:
        raise reply_error(state, UserReply(uid=-1, incremental_output="", finished=True))
    # Admission: a full server says so at once (the client can retry elsewhere or later) rather
    # than letting the queue, and every client's wait, grow without bound.
    if state.max_in_flight is not None and len(state.ack_map) >= state.max_in_flight:
        raise busy_error(state)
    uid = state.new_user()
    gen = Generation(uid)
    if state.request_timeout:
        gen.deadline = time.monotonic() + state.request_timeout
    shape.rid = f"{shape.rid}-{uid}"  # the uid in the id makes a request easy to follow in logs
    try:
        await state.send_one(TokenizeMsg(uid=uid, text=prompt, sampling_params=params))
        # Wait for the first token before answering, so that a prompt the tokenizer or the
        # scheduler rejects still gets a 400, even for a streaming request.
        first = await next_reply(state, gen, request)
    except ClientDisconnected:
        state.abort_user(uid)
        return Response(status_code=499)  # nginx's "client closed request"; nobody reads it
    except RequestTimedOut:
        state.abort_user(uid)
        raise timeout_error(state) from None
    except BaseException:
        state.abort_user(uid)
        raise
    if first.error:
        state.finish_user(uid)
        raise reply_error(state, first)
    if body.stream:
        chunks = stream_chunks(state, gen, first, shape, body.include_usage)
        # If the client leaves before Starlette even starts the generator, its `finally` never
        # runs; this still aborts the request when the generator object is dropped (a no-op if
        # the request already finished).
        weakref.finalize(chunks, state.abort_user, uid)
        return StreamingResponse(chunks, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    pieces = [first.incremental_output]
    reply = first
    try:
        while not reply.finished:
            reply = await next_reply(state, gen, request)
            if reply.error:
                raise reply_error(state, reply)
            pieces.append(reply.incremental_output)
    except ClientDisconnected:
        return Response(status_code=499)
    except RequestTimedOut:
        raise timeout_error(state) from None
    finally:
        if gen.done:
            state.finish_user(uid)
        else:  # client disconnected, or the server is stopping
            state.abort_user(uid)
    return JSONResponse(shape.full("".join(pieces), finish_reason_of(gen.finish_reason), gen.usage()))


async def stream_chunks(state: FrontendState, gen: Generation, first: UserReply, shape: ResponseShape,
                        include_usage: bool) -> AsyncIterator[str]:
    """SSE: a role chunk, content chunks, a chunk with finish_reason, [usage], then [DONE]."""
    try:
        if shape.chat:
            yield sse(shape.chunk(role=True, usage_field=include_usage))
        reply = first
        while True:
            if reply.error:
                yield sse(reply_error(state, reply).body())
                return
            if reply.incremental_output:
                yield sse(shape.chunk(text=reply.incremental_output, usage_field=include_usage))
            if reply.finished:
                break
            try:
                reply = await next_reply(state, gen)
            except RequestTimedOut:
                yield sse(timeout_error(state).body())  # `finally` aborts the request
                return
        yield sse(shape.chunk(finish_reason=finish_reason_of(gen.finish_reason), usage_field=include_usage))
        if include_usage:
            yield sse(shape.usage_chunk(gen.usage()))
        yield "data: [DONE]\n\n"
    finally:
        # Reached on normal end, and also when Starlette cancels us because the client left.
        if gen.done:
            state.finish_user(gen.uid)
        else:
            state.abort_user(gen.uid)


# ---------------------------------------------------------------- the app


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class ApiKeyMiddleware:
    """Require `Authorization: Bearer <key>` on every route but PUBLIC_PATHS, so on all of /v1/*
    (plain ASGI: streaming passes through untouched)."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self.expected = _digest(f"Bearer {api_key}".encode())

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] not in PUBLIC_PATHS:
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            # compare_digest: the time taken does not reveal how much of the key was right; hashing
            # both sides first also hides the key's length (compare_digest returns early on a
            # length mismatch).
            if not hmac.compare_digest(_digest(given), self.expected):
                err = APIError(401, "invalid or missing API key (send 'Authorization: Bearer <key>')",
                               type="authentication_error", code="invalid_api_key")
                await err.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


_JSON_STRUCTURE = re.compile(rb'["\\\[\]{}]')


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text `body` nests arrays/objects more than `limit` deep.

    Python's parser would fail on very deep nesting with a RecursionError (a 400 already, but a
    vague one) after doing the work; this scan looks only at quotes, backslashes and brackets.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # the common case: not enough brackets to be too deep
    depth, in_string, skip = 0, False, -1
    for m in _JSON_STRUCTURE.finditer(body):
        i = m.start()
        if i == skip:  # the character after a backslash in a string
            continue
        c = body[i]
        if in_string:
            if c == 0x5C:  # backslash
                skip = i + 1
            elif c == 0x22:  # quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        else:  # ] }
            depth -= 1
    return False


class BodyLimitMiddleware:
    """Read a request body at most `max_bytes` long (413 beyond), and reject, before any parsing,
    bodies that are not UTF-8 or nest too deep (400). The body is then replayed to the app."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        too_large = APIError(413, f"the request body is larger than {self.max_bytes} bytes",
                             code="request_too_large")
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            # Answer without reading it; the server closes the connection afterwards.
            await too_large.response()(scope, receive, send)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:  # chunked transfer encoding: no Content-Length to check first
                await too_large.response()(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        error = None
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as e:
            error = APIError(400, f"the request body is not valid UTF-8 (byte {e.start})", code="invalid_json")
        if error is None and json_too_deep(body):
            error = APIError(400, f"the request body nests JSON deeper than {MAX_JSON_DEPTH} levels",
                             code="invalid_json")
        if error is not None:
            await error.response()(scope, receive, send)
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later calls: wait for the client to disconnect

        await self.app(scope, replay, send)


def create_app(state: FrontendState, model_name: str, max_seq_len: Optional[int] = None,
               api_key: Optional[str] = None, max_request_bytes: int = 4 << 20):
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, PlainTextResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    app = FastAPI(title="minisgl_edu", docs_url=None, redoc_url=None)
    # The last one added runs first: the key is checked before a body is read.
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_request_bytes)
    if api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=api_key)

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError):
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        # FastAPI answers 422 with its own shape; OpenAI clients expect 400 and {"error": {...}}.
        errors = exc.errors()
        # With unions (`prompt`, `stop`, `content`) pydantic reports one error per alternative;
        # "Input should be a valid list" for the wrong alternatives says less than a value error.
        specific = [e for e in errors if not str(e.get("type", "")).endswith("_type")]
        first = (specific or errors or [{}])[0]
        if first.get("type") == "json_invalid":
            return APIError(400, f"request body is not valid JSON: {first.get('ctx', {}).get('error', '')}",
                            code="invalid_json").response()
        if tuple(first.get("loc", ())) == ("body",):
            return APIError(400, "the request body must be a JSON object (send Content-Type: application/json)",
                            code="invalid_json").response()
        # Keep field names and list indexes; drop pydantic's names of union alternatives.
        loc = [str(x) for x in first.get("loc", ()) if x != "body" and re.fullmatch(r"\w+", str(x))]
        param = ".".join(loc) or None
        msg = first.get("msg", "invalid value")
        if first.get("type") == "string_unicode":
            msg = "text must be valid Unicode (lone surrogate code points are not allowed)"
        message = f"{param}: {msg}" if param else msg
        return APIError(400, message, param=param, code="invalid_value").response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return APIError(exc.status_code, str(exc.detail), type=kind).response()

    def shape(chat: bool, body: GenerateRequest) -> ResponseShape:
        return ResponseShape(chat, "chatcmpl" if chat else "cmpl", model_name, int(time.time()))

    @app.post("/v1/chat/completions", responses=ERROR_RESPONSES)
    async def v1_chat_completions(body: ChatCompletionRequest, request: Request):
        if not body.messages:
            raise APIError(400, "messages must be a non-empty list", param="messages", code="invalid_value")
        messages = []
        for m in body.messages:
            content = m.content if not isinstance(m.content, list) else "".join(p.text for p in m.content)
            messages.append({"role": m.role, "content": content or ""})
        return await generate(state, request, messages, body, shape(True, body))

    @app.post("/v1/completions", responses=ERROR_RESPONSES)
    async def v1_completions(body: CompletionRequest, request: Request):
        prompt: Any = body.prompt
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], (str, list)):
            if len(prompt) != 1:
                raise APIError(400, "only one prompt per request is supported", param="prompt", code="invalid_value")
            prompt = prompt[0]
        if len(prompt) == 0:
            raise APIError(400, "prompt must not be empty", param="prompt", code="invalid_value")
        return await generate(state, request, prompt, body, shape(False, body))

    @app.get("/v1/models")
    async def v1_models():
        card = {"id": model_name, "object": "model", "created": 0, "owned_by": "minisgl_edu"}
        if max_seq_len:
            card["max_model_len"] = max_seq_len
        return {"object": "list", "data": [card]}

    @app.get("/health")
    async def health():
        if state.dead_worker is not None:
            return service_unavailable(state.dead_worker).response()
        return {"status": "ok"}

    @app.get("/metrics")
    async def metrics():
        return PlainTextResponse(render_metrics(state.stats, len(state.ack_map)),
                                 media_type="text/plain; version=0.0.4")

    @app.get("/")
    async def root():
        return JSONResponse({"name": "minisgl_edu", "model": model_name,
                             "endpoints": ["/v1/chat/completions", "/v1/completions", "/v1/models",
                                           "/health", "/metrics"]})

    return app


# ---------------------------------------------------------------- running it


def _make_server(config: Any, state: FrontendState):
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, with two changes to how it stops.

        uvicorn re-raises a caught signal after it has shut down, which for SIGTERM would kill
        the process before `launch.py` stops the workers: here a signal only asks to stop. And
        open streams are ended right away (an error event), not cancelled after a timeout.
        """

        @contextlib.contextmanager
        def capture_signals(self):
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, self.handle_exit)
            yield

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            # We are inside a signal handler: touch the asyncio queues from the loop, not from here.
            loop.call_soon_threadsafe(state.begin_shutdown)

    loop = asyncio.get_running_loop()
    return Server(config)


def run_api_server(args: Any, addrs: Any, workers: list, sock: Any) -> int:
    """Serve HTTP on `sock` until Ctrl+C / SIGTERM (exit code 0) or a worker dies (exit code 1)."""
    import uvicorn

    info = workers[0].info

    async def main() -> int:
        max_in_flight = None
        if args.max_queue is not None:
            max_in_flight = info.get("max_running_requests", 0) + args.max_queue
        state = FrontendState(addrs, workers, info.get("stats"), max_in_flight=max_in_flight,
                              request_timeout=args.request_timeout or None)
        app = create_app(state, args.model_name, info.get("max_seq_len"), args.api_key, args.max_request_bytes)
        config = uvicorn.Config(app, log_level=args.log_level, timeout_graceful_shutdown=2,
                                access_log=args.log_level in ("debug", "info"))
        server = _make_server(config, state)
        exit_code = 0

        def on_death(message: str) -> None:
            nonlocal exit_code
            exit_code = 1
            print(f"[minisgl] error: {message}; shutting down", file=sys.stderr, flush=True)
            # A moment for the 503s to reach the waiting clients, then stop.
            asyncio.get_running_loop().call_later(1.0, setattr, server, "should_exit", True)

        tasks = [asyncio.create_task(state.listen()), asyncio.create_task(state.watch_workers(on_death))]
        try:
            await server.serve(sockets=[sock])
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            state.close()
        return exit_code

    return asyncio.run(main())
