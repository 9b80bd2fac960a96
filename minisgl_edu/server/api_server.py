"""The API server: OpenAI-compatible HTTP in the main process, the two ends of the request path.

Where this sits on the request path: first and last.

    client --HTTP--> v1_chat_completions --> generate(): a uid, TokenizeMsg to a tokenizer  (generate.py)
                     ... tokenizer -> scheduler -> detokenizer ...
    FrontendState.listen() <--UserReply-- detokenizer, by uid                              (frontend.py)
    stream_chunks(): each reply as an SSE chunk ... `data: [DONE]`                         (generate.py)
    client goes away: AbortMsg(uid) to the tokenizer, which tells the scheduler to free the request

This file holds the app and its routes and runs it with uvicorn. Beside it: `frontend.py` (the
sockets and who waits for which uid), `generate.py` (one request, streamed or not), `limits.py`
(body size, JSON depth, API key), `errors.py` (OpenAI-shaped errors), `protocol.py` (the shapes of
bodies and chunks).

Endpoints: POST /v1/chat/completions, POST /v1/completions (stream or not), GET /v1/models,
GET /health, GET /metrics (Prometheus text), GET /dashboard (the live page, `dashboard.py`),
GET /debug/stages (where the latest requests' first tokens waited, `stages.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from typing import Any, Optional

from fastapi import Request  # module level: FastAPI resolves the handlers' annotations here

from minisgl_edu.server.dashboard import install_dashboard
from minisgl_edu.server.errors import install_error_handlers
from minisgl_edu.server.frontend import FrontendState
from minisgl_edu.server.generate import generate
from minisgl_edu.server.limits import ApiKeyMiddleware, BodyLimitMiddleware
from minisgl_edu.server.protocol import (
    ERROR_RESPONSES,
    APIError,
    ChatCompletionRequest,
    CompletionRequest,
    GenerateRequest,
    ResponseShape,
    service_unavailable,
)
from minisgl_edu.server.stages import StampMiddleware, install_stages


def create_app(
    state: FrontendState,
    model_name: str,
    max_seq_len: Optional[int] = None,
    api_key: Optional[str] = None,
    max_request_bytes: int = 4 << 20,
):
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, Response

    app = FastAPI(title="minisgl_edu", docs_url=None, redoc_url=None)
    # The last one added runs first: the key is checked before a body is read.
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_request_bytes)
    if api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=api_key)
    app.add_middleware(StampMiddleware)  # first of all: a request's stages start when it arrives

    install_error_handlers(app)
    install_dashboard(app, state)  # GET /dashboard, /dashboard/state (dashboard.py)
    install_stages(app, state.stages)  # GET /debug/stages: where each first token waited (stages.py)

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
        # prometheus_client's text format, from this server's own registry (server/metrics.py)
        return Response(state.metrics.render(), media_type=state.metrics.content_type)

    @app.get("/")
    async def root():
        return JSONResponse(
            {
                "name": "minisgl_edu",
                "model": model_name,
                "endpoints": [
                    "/v1/chat/completions",
                    "/v1/completions",
                    "/v1/models",
                    "/health",
                    "/metrics",
                    "/dashboard",
                ],
            }
        )

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
        state = FrontendState(
            addrs,
            workers,
            info.get("stats"),
            max_in_flight=max_in_flight,
            request_timeout=args.request_timeout or None,
            max_n=info.get("max_running_requests") or None,
        )
        app = create_app(state, args.model_name, info.get("max_seq_len"), args.api_key, args.max_request_bytes)
        config = uvicorn.Config(
            app, log_level=args.log_level, timeout_graceful_shutdown=2, access_log=args.log_level in ("debug", "info")
        )
        server = _make_server(config, state)
        exit_code = 0

        def on_death(message: str) -> None:
            nonlocal exit_code
            exit_code = 1
            print(f"[minisgl] error: {message}; shutting down", file=sys.stderr, flush=True)
            # A moment for the 503s to reach the waiting clients, then stop.
            asyncio.get_running_loop().call_later(1.0, setattr, server, "should_exit", True)

        async with state.serving(on_death):
            await server.serve(sockets=[sock])
        return exit_code

    # uvloop runs the event loop in C (libuv), as SGLang's and vLLM's servers do: every reply and
    # every SSE chunk passes through the loop, so its cost per callback is the API server's cost
    # per token. asyncio's own loop where uvloop is not installed (it does not build on Windows).
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(main())
