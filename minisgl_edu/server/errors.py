"""The API server's errors: what a request that cannot be served gets back, in OpenAI's shape.

`{"error": {"message", "type", "param", "code"}}` with a 4xx status for a bad request, 503 when a
worker process died or the server is full or stopping, 504 past `--request-timeout`. The error
type itself, `APIError`, is in `protocol.py`; here are the errors built from the server's state
and the handlers that turn FastAPI's own errors (422 validation, 404) into that shape.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from fastapi import Request  # module level: FastAPI resolves the handlers' annotations here

from minisgl_edu.message import UserReply
from minisgl_edu.server.frontend import FrontendState
from minisgl_edu.server.protocol import APIError, GenerateRequest, service_unavailable


def timeout_error(state: FrontendState) -> APIError:
    return APIError(
        504,
        f"the request did not finish within {state.request_timeout:g} s (--request-timeout); it was aborted",
        type="timeout_error",
        code="request_timeout",
    )


def busy_error(state: FrontendState) -> APIError:
    return APIError(
        503,
        f"the server is busy: {state.max_in_flight} requests are running or queued; retry later",
        type="service_unavailable",
        code="queue_full",
        headers={"Retry-After": "1"},
    )


def reply_error(state: FrontendState, reply: UserReply, body: Optional[GenerateRequest] = None) -> APIError:
    """The error for a reply that carries one: a worker died or the server is stopping (503), or
    the tokenizer or the scheduler rejected the request (400, the field it names as `param`)."""
    if state.dead_worker is not None:
        return service_unavailable(f"the server is shutting down: {state.dead_worker}")
    if state.shutting_down is not None:
        return APIError(503, state.shutting_down, type="service_unavailable", code="shutting_down")
    message = reply.error or "request failed"
    param, code = rejected_field(message, body)
    return APIError(400, message, param=param, code=code)


# The workers' rejections travel as text (`UserReply.error`), written to be shown as they are; the
# field they are about is read back from how each begins.
_PROMPT_ERRORS = ("the prompt", "token id ", "messages", "this model has no chat template")
_GRAMMAR_ERRORS = ("invalid json_schema", "invalid regex", "invalid ebnf")


def rejected_field(message: str, body: Optional[GenerateRequest]) -> tuple[Optional[str], str]:
    """(param, code) for a rejection message of the tokenizer or the scheduler."""
    prompt = "messages" if body is not None and "messages" in type(body).model_fields else "prompt"
    if message.startswith(("This model's maximum context length", "the prompt has")):
        return prompt, "context_length_exceeded"  # OpenAI's code (and the tokenizer's words) for a prompt too long
    if message.startswith(_PROMPT_ERRORS):
        return prompt, "invalid_prompt"
    if message.startswith(_GRAMMAR_ERRORS):
        # the field the client sent: response_format, regex, guided_json ...
        return (body.grammar_field() if body is not None else None), "invalid_value"
    # SamplingParams.validate's messages and the scheduler's own begin with the field's name
    first = re.match(r"\w+", message)
    if first and first.group() in (type(body) if body is not None else GenerateRequest).model_fields:
        return first.group(), "invalid_value"
    return None, "invalid_request"


def install_error_handlers(app: Any) -> None:
    """Every error the app raises or FastAPI detects answers in OpenAI's shape."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

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
            return APIError(
                400, f"request body is not valid JSON: {first.get('ctx', {}).get('error', '')}", code="invalid_json"
            ).response()
        if tuple(first.get("loc", ())) == ("body",):
            return APIError(
                400, "the request body must be a JSON object (send Content-Type: application/json)", code="invalid_json"
            ).response()
        # Keep field names and list indexes; drop pydantic's names of union alternatives.
        loc = [str(x) for x in first.get("loc", ()) if x != "body" and re.fullmatch(r"\w+", str(x))]
        param = ".".join(loc) or None
        msg = first.get("msg", "invalid value")
        code = "invalid_value"
        if first.get("type") == "string_unicode":
            msg = "text must be valid Unicode (lone surrogate code points are not allowed)"
        if first.get("type") == "extra_forbidden":
            # OpenAI's own code for a field it does not know; a dropped field would go unnoticed
            msg, code = (
                "unknown field: this server does not read it, so it refuses it rather than ignoring it",
                "unknown_parameter",
            )
        if first.get("type") == "finite_number":
            msg = "must be a finite number (not NaN or Infinity)"
        message = f"{param}: {msg}" if param else msg
        return APIError(400, message, param=param, code=code).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return APIError(exc.status_code, str(exc.detail), type=kind).response()
