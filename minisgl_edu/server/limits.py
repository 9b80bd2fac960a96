"""Limits that keep one client (or many) from hurting the others: HTTP middleware, plain ASGI.

Where this sits on the request path: in front of every route, before a body is parsed
(see docs/reliability.md).

* `--max-request-bytes`: a larger body gets 413 before it is parsed; JSON nested deeper than
  `MAX_JSON_DEPTH` or a body that is not UTF-8 gets 400 (`BodyLimitMiddleware`).
* `--api-key`: checked in constant time on every route except the public ones (`PUBLIC_PATHS`)
  (`ApiKeyMiddleware`).

The other two limits act on a generation request itself, in `generate.py`: `--max-queue` (503 with
`Retry-After` when the server is full) and `--request-timeout` (504, the request aborted).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from minisgl_edu.server.protocol import APIError

MAX_JSON_DEPTH = 32  # the deepest valid body is 4 levels ({"messages": [{"content": [{...}]}]})
PUBLIC_PATHS = frozenset({"/", "/health", "/metrics", "/openapi.json"})  # no API key needed


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
                err = APIError(
                    401,
                    "invalid or missing API key (send 'Authorization: Bearer <key>')",
                    type="authentication_error",
                    code="invalid_api_key",
                )
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
        too_large = APIError(413, f"the request body is larger than {self.max_bytes} bytes", code="request_too_large")
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
            error = APIError(
                400, f"the request body nests JSON deeper than {MAX_JSON_DEPTH} levels", code="invalid_json"
            )
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
