"""The OpenAI wire format: request bodies, error bodies, response and stream chunk shapes, metrics text.

Where this sits on the request path: at the HTTP edge, in the API server process. A request body
is validated here (pydantic, strict types) and turned into `SamplingParams`; on the way back,
replies become `chat.completion` / `text_completion` objects or SSE chunks. Nothing here knows
about processes or sockets; `api_server.py` does the sending and waiting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict

from minisgl_edu.core import SamplingParams

DEFAULT_MAX_TOKENS = 128  # when the request names none; the scheduler also caps it by the context


# ---------------------------------------------------------------- request bodies (OpenAI's fields)


class _Strict(BaseModel):
    # strict: "10" is not an int and 1.5 is not a max_tokens; unknown fields are ignored, as OpenAI does.
    model_config = ConfigDict(strict=True, extra="ignore")


class TextPart(_Strict):
    type: Literal["text"]
    text: str


class ChatMessage(_Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[TextPart], None] = None


class StreamOptions(_Strict):
    include_usage: bool = False


class GenerateRequest(_Strict):
    model: Optional[str] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None  # the newer OpenAI name of max_tokens
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None  # SGLang extension
    stop: Union[str, list[str], None] = None
    seed: Optional[int] = None
    ignore_eos: bool = False  # SGLang extension: keep going past EOS (benchmarks)
    n: int = 1
    stream: bool = False
    stream_options: Optional[StreamOptions] = None

    def sampling_params(self) -> SamplingParams:
        max_tokens = self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens
        params = SamplingParams(
            max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            # OpenAI's defaults: temperature 1, top_p 1. temperature 0 means greedy.
            temperature=1.0 if self.temperature is None else self.temperature,
            top_p=1.0 if self.top_p is None else self.top_p,
            top_k=-1 if self.top_k is None else self.top_k,
            ignore_eos=self.ignore_eos,
            stop=self.stop or [],
            seed=self.seed,
        )
        try:
            params.validate()
        except ValueError as e:
            raise APIError(400, str(e), code="invalid_value") from None
        if self.n != 1:
            raise APIError(400, "only n=1 is supported", param="n", code="invalid_value")
        return params

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


class ChatCompletionRequest(GenerateRequest):
    messages: list[ChatMessage]


class CompletionRequest(GenerateRequest):
    prompt: Union[str, list[int], list[str], list[list[int]]]


# ---------------------------------------------------------------- errors


class APIError(Exception):
    def __init__(self, status: int, message: str, type: str = "invalid_request_error",
                 param: Optional[str] = None, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self):
        from fastapi.responses import JSONResponse

        return JSONResponse(self.body(), status_code=self.status)


def service_unavailable(message: str) -> APIError:
    return APIError(503, message, type="service_unavailable", code="worker_died")


# ---------------------------------------------------------------- response shapes


def finish_reason_of(reason: Optional[str]) -> Optional[str]:
    return reason if reason in ("stop", "length") else ("stop" if reason else None)


def sse(obj: Any) -> str:
    return f"data: {json.dumps(obj, ensure_ascii=False, separators=(',', ':'))}\n\n"


@dataclass
class ResponseShape:
    """The difference between chat and text completions, in one place."""

    chat: bool
    rid: str
    model: str
    created: int

    def _base(self, stream: bool) -> dict:
        obj = ("chat.completion.chunk" if stream else "chat.completion") if self.chat else "text_completion"
        return {"id": self.rid, "object": obj, "created": self.created, "model": self.model}

    def chunk(self, text: Optional[str] = None, role: bool = False, finish_reason: Optional[str] = None,
              usage_field: bool = False) -> dict:
        if self.chat:
            delta: dict = {}
            if role:
                delta["role"] = "assistant"
                delta["content"] = ""
            if text:
                delta["content"] = text
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        else:
            choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish_reason}
        out = {**self._base(stream=True), "choices": [choice]}
        if usage_field:
            out["usage"] = None  # OpenAI: null on every chunk when usage is requested, set on the last
        return out

    def usage_chunk(self, usage: dict) -> dict:
        return {**self._base(stream=True), "choices": [], "usage": usage}

    def full(self, text: str, finish_reason: Optional[str], usage: dict) -> dict:
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text},
                      "logprobs": None, "finish_reason": finish_reason}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return {**self._base(stream=False), "choices": [choice], "usage": usage}


# ---------------------------------------------------------------- /metrics


METRICS_HELP = {
    "kv_pages_total": ("gauge", "Pages in the paged KV cache."),
    "kv_pages_free": ("gauge", "KV pages available to new requests (free, or cached and evictable)."),
    "kv_pages_cached": ("gauge", "KV pages held by the prefix cache."),
    "running_requests": ("gauge", "Requests in the decode batch."),
    "waiting_requests": ("gauge", "Requests waiting for (or part-way through) prefill."),
    "generated_tokens_total": ("counter", "Tokens generated since start-up."),
}


def render_metrics(stats: dict, in_flight: int) -> str:
    lines = []
    for key, value in stats.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        kind, help_text = METRICS_HELP.get(key, ("gauge", f"Scheduler statistic {key}."))
        name = f"minisgl_{key}"
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {value}"]
    lines += ["# HELP minisgl_http_requests_in_flight Generation requests the API server is waiting on.",
              "# TYPE minisgl_http_requests_in_flight gauge", f"minisgl_http_requests_in_flight {in_flight}"]
    return "\n".join(lines) + "\n"
