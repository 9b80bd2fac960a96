"""One generation request, from the HTTP handler's call to its last byte: the part chapter 02 reads.

Where this sits on the request path: `generate()` is called by the route handlers in
`api_server.py`. It takes a uid (`state.new_user()`), sends the `TokenizeMsg`, waits for the
first reply (so that a prompt the tokenizer or scheduler rejects still gets a 400), then either
collects every `UserReply` into one JSON response or returns `stream_chunks`, which turns each
reply into an SSE chunk and ends with `data: [DONE]`. A client that goes away, or a request past
its deadline, is aborted: `state.abort_user(uid)` sends the `AbortMsg`. On the way the request's
timings go to /metrics (`state.metrics`, `metrics.py`): each reply handed on, then its end, once.

With `n` > 1 the same happens for n uids at once, one `Generation` each (one choice of the
response, its `index`); the one `TokenizeMsg` carries all n uids, and the scheduler runs them as
n requests that share the prompt's pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Optional

from minisgl_edu.message import TokenizeMsg, UserReply
from minisgl_edu.message.stamps import Stamps, stamp
from minisgl_edu.server.errors import busy_error, reply_error, timeout_error
from minisgl_edu.server.frontend import FrontendState
from minisgl_edu.server.metrics import RequestTiming
from minisgl_edu.server.protocol import APIError, Choice, GenerateRequest, ResponseShape, finish_reason_of, sse
from minisgl_edu.server.stages import received_at

POLL_INTERVAL = 0.5  # seconds: how often a non-streaming request checks that its client is still there


class ClientDisconnected(Exception):
    pass


class RequestTimedOut(Exception):
    pass


# What a request's deadline timer puts in its queue (`Generation.timer`); never sent by a worker.
TIMED_OUT = UserReply(uid=-1, incremental_output="", finished=True, finish_reason="abort", error="timed out")


def usage(gens: list[Generation]) -> dict:
    """The response's usage: the prompt once (the n answers share it), every answer's tokens."""
    # prompt_tokens_details.cached_tokens: OpenAI's name for the prompt tokens served from a
    # cache (SGLang fills it from its radix cache, as here); for n answers, the first one's hit.
    prompt, output = gens[0].num_prompt_tokens, sum(g.num_output_tokens for g in gens)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": gens[0].cached_tokens},
    }


@dataclass
class Generation:
    """What the API server knows about one request while it runs."""

    uid: int
    route: int = -1  # the uid that picks the tokenizer worker: the first of the n (-1: this one)
    num_prompt_tokens: int = 0
    num_output_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose K/V the prefix cache already had
    queue_seconds: Optional[float] = None  # how long the scheduler kept it waiting (set with its first token)
    finish_reason: Optional[str] = None
    done: bool = False  # the last reply arrived: no abort needed
    timer: Optional[asyncio.TimerHandle] = None  # puts TIMED_OUT in the queue at the deadline
    held: Optional[UserReply] = None  # an error reply taken early (`_join_waiting`), served next
    # time.monotonic() when to ask whether the client left: not at once (the check is costly in
    # Starlette, and a burst of new requests would pay it for each), then every POLL_INTERVAL
    next_client_check: float = field(default_factory=lambda: time.monotonic() + POLL_INTERVAL)
    timing: RequestTiming = field(default_factory=RequestTiming)  # starts now: the request was received
    text_offset: int = 0  # (completions' logprobs) characters of the tokens sent so far
    # (the first of the n) its path to the first token: started here, completed by the first
    # reply with text (message/stamps.py), kept by `state.stages` once that text is written
    stamps: Optional[Stamps] = None

    @property
    def finished_reason(self) -> str:
        """How it ended, for /metrics: stop or length, or abort (client gone, timeout, failed worker)."""
        if not self.done or self.finish_reason == "abort":
            return "abort"
        return "length" if self.finish_reason == "length" else "stop"


async def next_reply(state: FrontendState, gen: Generation, request: Any = None) -> UserReply:
    """The next reply of `gen` that carries text, the end, or an error.

    The tokenizer's reply with the prompt length carries none of those: it is merged into `gen`.
    Replies that are already waiting behind it are joined to it (`_join_waiting`). With
    `request`, also notice a client that disconnects while we wait (non-streaming requests; for
    streams, Starlette cancels the generator instead).
    """
    queue = state.ack_map.get(gen.uid)
    if queue is None:
        raise ClientDisconnected()
    while True:
        reply = await _receive(queue, gen, request)
        _account(gen, reply)
        if reply.finished or reply.error:
            break
        if reply.incremental_output:
            reply = _join_waiting(queue, gen, reply)
            break
    if reply.finished and not reply.error and gen.num_prompt_tokens == 0:
        await _await_prompt_length(queue, gen)
    return reply


async def _receive(queue: asyncio.Queue, gen: Generation, request: Any) -> UserReply:
    """The next reply in `gen`'s queue, as it comes; raises when the deadline has passed (the
    timer put `TIMED_OUT` in the queue) or, with `request`, when the client left."""
    if gen.held is not None:
        reply, gen.held = gen.held, None
    elif request is None:
        reply = await queue.get()
    else:
        # Check the client every POLL_INTERVAL by the clock, not only when no reply came for
        # that long: a running request gets a token every few milliseconds, and its client may
        # have left long ago.
        while True:
            now = time.monotonic()
            if now >= gen.next_client_check:
                gen.next_client_check = now + POLL_INTERVAL
                if await request.is_disconnected():
                    raise ClientDisconnected()
            if not queue.empty():
                reply = queue.get_nowait()
                break
            try:
                reply = await asyncio.wait_for(queue.get(), timeout=POLL_INTERVAL)
                break
            except asyncio.TimeoutError:
                continue
    if reply is TIMED_OUT:
        raise RequestTimedOut()
    return reply


def _account(gen: Generation, reply: UserReply) -> None:
    """What one reply tells the API server about its request: counts, queue time, the end."""
    gen.num_prompt_tokens = max(gen.num_prompt_tokens, reply.num_prompt_tokens)
    gen.num_output_tokens = max(gen.num_output_tokens, reply.num_output_tokens)
    gen.cached_tokens = max(gen.cached_tokens, reply.cached_tokens)
    if reply.queue_seconds is not None:
        gen.queue_seconds = reply.queue_seconds
    if reply.stamps and gen.stamps is not None:
        gen.stamps.update(reply.stamps)
    if reply.finished or reply.error:
        gen.done = True
        gen.finish_reason = reply.finish_reason


def _join_waiting(queue: asyncio.Queue, gen: Generation, reply: UserReply) -> UserReply:
    """`reply` with the replies already waiting behind it joined on: one chunk for all of them.

    Unloaded, a reply is taken as soon as it arrives and nothing waits. When the API server falls
    behind (many streams, a fast GPU), each request's queue holds several replies by the time it
    is served; sending them as one SSE chunk (one JSON encoding, one socket write) makes the work
    per token smaller exactly when it has to be, as SGLang's streaming does. An error is not
    joined: it stays for the next call, so the text before it still goes out.
    """
    while not (reply.finished or queue.empty()):
        later = queue.get_nowait()
        if later.error:
            gen.held = later
            break
        _account(gen, later)  # the counts and the queue time are kept in `gen`, reply by reply
        reply = dataclasses.replace(
            later,
            incremental_output=reply.incremental_output + later.incremental_output,
            logprobs=reply.logprobs + later.logprobs,
        )
    return reply


async def _await_prompt_length(queue: asyncio.Queue, gen: Generation) -> None:
    # The prompt-length reply comes from the tokenizer, the tokens from the detokenizer: two pipes
    # into one socket, so under load the last token can (rarely) arrive first. It is on its way.
    with contextlib.suppress(asyncio.TimeoutError):
        while gen.num_prompt_tokens == 0:
            reply = await asyncio.wait_for(queue.get(), timeout=1.0)
            gen.num_prompt_tokens = reply.num_prompt_tokens


def end_request(state: FrontendState, gen: Generation) -> None:
    """The API server is done with `gen`: forget its uid (and abort it in the scheduler unless it
    finished), and count it on /metrics. Safe to call twice; the second call does nothing."""
    if gen.timer is not None:
        gen.timer.cancel()
    if gen.done:
        state.finish_user(gen.uid)
    else:  # client disconnected, timed out, or the server is stopping
        state.abort_user(gen.uid, route=gen.route)
    state.metrics.observe_end(
        gen.timing,
        gen.finished_reason,
        prompt_tokens=gen.num_prompt_tokens,
        output_tokens=gen.num_output_tokens,
        cached_tokens=gen.cached_tokens,
        queue_seconds=gen.queue_seconds,
    )


async def generate(state: FrontendState, request: Any, prompt: Any, body: GenerateRequest, shape: ResponseShape):
    """Send one request down the path and turn its replies into an OpenAI response."""
    from fastapi.responses import JSONResponse, Response, StreamingResponse

    params = body.sampling_params()
    if state.max_n is not None and params.n > state.max_n:
        raise APIError(
            400, f"n must be at most {state.max_n} (the running-request limit)", param="n", code="invalid_value"
        )
    if state.dead_worker is not None or state.shutting_down is not None:
        raise reply_error(state, UserReply(uid=-1, incremental_output="", finished=True))
    # Admission: a full server says so at once (the client can retry elsewhere or later) rather
    # than letting the queue, and every client's wait, grow without bound.
    if state.max_in_flight is not None and len(state.ack_map) + params.n > state.max_in_flight:
        raise busy_error(state)
    uids = [state.new_user() for _ in range(params.n)]
    gens = [Generation(uid, route=uids[0]) for uid in uids]
    gens[0].stamps = {"received": received_at(request)}
    if state.request_timeout:
        loop = asyncio.get_running_loop()
        for gen in gens:
            gen.timer = loop.call_later(state.request_timeout, state.ack_map[gen.uid].put_nowait, TIMED_OUT)
    shape.rid = f"{shape.rid}-{uids[0]}"  # the uid in the id makes a request easy to follow in logs
    try:
        stamp(gens[0].stamps, "api_sent")
        msg = TokenizeMsg(uid=uids[0], text=prompt, sampling_params=params, more_uids=uids[1:], stamps=gens[0].stamps)
        await state.send_one(msg)
        # Wait for the first token before answering, so that a prompt the tokenizer or the
        # scheduler rejects still gets a 400, even for a streaming request. (n > 1: the first
        # answer's; the others have the same prompt and parameters, and may have to wait for pages.)
        first = await next_reply(state, gens[0], request)
    except ClientDisconnected:
        end_requests(state, gens)
        return Response(status_code=499)  # nginx's "client closed request"; nobody reads it
    except RequestTimedOut:
        end_requests(state, gens)
        raise timeout_error(state) from None
    except BaseException:
        end_requests(state, gens)
        raise
    if first.error:
        # Rejected (e.g. a prompt longer than the cache) or the server failed: it never ran, so
        # it is not counted on /metrics.
        for gen in gens:
            state.finish_user(gen.uid) if gen.done else state.abort_user(gen.uid, route=gen.route)
        raise reply_error(state, first, body)
    state.metrics.observe_reply(gens[0].timing, gens[0].num_output_tokens)  # the time to first token
    if body.stream:
        chunks = stream_chunks(state, gens, first, shape, body.include_usage, params.logprobs)
        # If the client leaves before Starlette even starts the generator, its `finally` never
        # runs; this still aborts (and counts) the request when the generator object is dropped
        # (a no-op if the request already ended).
        weakref.finalize(chunks, end_requests, state, gens)
        return StreamingResponse(
            chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
    choices = []
    try:
        for gen in gens:
            reply = first if gen is gens[0] else await _observed_reply(state, gen, request)
            if reply.error:
                raise reply_error(state, reply, body)
            pieces, entries = [reply.incremental_output], list(reply.logprobs)
            while not reply.finished:
                reply = await _observed_reply(state, gen, request)
                if reply.error:
                    raise reply_error(state, reply, body)
                pieces.append(reply.incremental_output)
                entries.extend(reply.logprobs)
            logprobs = shape.logprobs(entries) if params.logprobs else None
            choices.append(Choice("".join(pieces), finish_reason_of(gen.finish_reason), logprobs))
    except ClientDisconnected:
        return Response(status_code=499)
    except RequestTimedOut:
        raise timeout_error(state) from None
    finally:
        end_requests(state, gens)
    state.stages.record(gens[0].uid, gens[0].stamps)  # no SSE: the path ends at api_recv
    return JSONResponse(shape.full(choices, usage(gens)))


def end_requests(state: FrontendState, gens: list[Generation]) -> None:
    for gen in gens:
        end_request(state, gen)


async def stream_chunks(
    state: FrontendState,
    gens: list[Generation],
    first: UserReply,
    shape: ResponseShape,
    include_usage: bool,
    logprobs: bool = False,
) -> AsyncIterator[str]:
    """SSE: a role chunk, content chunks, a chunk with finish_reason, [usage], then [DONE]; with
    n > 1 the chunks of the n choices interleave as their tokens come, each with its `index`."""
    try:
        if shape.chat:
            for index in range(len(gens)):
                yield sse(shape.chunk(role=True, usage_field=include_usage, index=index))
        async with contextlib.aclosing(replies_of(state, gens, first)) as replies:
            async for index, reply in replies:
                gen = gens[index]
                if reply.error:
                    yield sse(reply_error(state, reply).body())
                    return
                if reply.incremental_output or reply.logprobs:
                    lp = None
                    if logprobs:
                        lp = shape.logprobs(reply.logprobs, gen.text_offset)
                        gen.text_offset += sum(len(e["token"]) for e in reply.logprobs)
                    yield sse(
                        shape.chunk(reply.incremental_output, usage_field=include_usage, index=index, logprobs=lp)
                    )
                    if gen.stamps is not None and "sse_write" not in gen.stamps:
                        # Back here once the chunk is handed to the connection: the path is complete.
                        stamp(gen.stamps, "sse_write")
                        state.stages.record(gen.uid, gen.stamps)
                if reply.finished:
                    reason = finish_reason_of(gen.finish_reason)
                    yield sse(shape.chunk(finish_reason=reason, usage_field=include_usage, index=index))
        if include_usage:
            yield sse(shape.usage_chunk(usage(gens)))
        yield "data: [DONE]\n\n"
    except RequestTimedOut:
        yield sse(timeout_error(state).body())  # `finally` aborts the request
    finally:
        # Reached on normal end, and also when Starlette cancels us because the client left:
        # then `end_request` calls `state.abort_user`.
        end_requests(state, gens)


async def replies_of(
    state: FrontendState, gens: list[Generation], first: UserReply
) -> AsyncIterator[tuple[int, UserReply]]:
    """(choice index, reply) for every reply of every generation, `first` (the first answer's
    first reply) first, then in the order they arrive, until each has finished (or one fails)."""
    yield 0, first
    if len(gens) == 1:  # the common case, without a task per reply
        reply = first
        while not (reply.finished or reply.error):
            reply = await _observed_reply(state, gens[0])
            yield 0, reply
        return
    waiting = {asyncio.ensure_future(_observed_reply(state, gen)): i for i, gen in enumerate(gens) if i or not gen.done}
    try:
        while waiting:
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                index = waiting.pop(task)
                reply = task.result()
                yield index, reply
                if not (reply.finished or reply.error):
                    waiting[asyncio.ensure_future(_observed_reply(state, gens[index]))] = index
    finally:
        for task in waiting:
            task.cancel()


async def _observed_reply(state: FrontendState, gen: Generation, request: Any = None) -> UserReply:
    """`next_reply`, counted on /metrics (the time to its first token, then between tokens)."""
    reply = await next_reply(state, gen, request)
    if not reply.error:
        state.metrics.observe_reply(gen.timing, gen.num_output_tokens)
    return reply
