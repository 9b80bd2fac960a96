"""The OpenAI wire format: request bodies, error bodies, response and stream chunk shapes.

Where this sits on the request path: at the HTTP edge, in the API server process. A request body
is validated here (pydantic, strict types) and turned into `SamplingParams`; on the way back,
replies become `chat.completion` / `text_completion` objects or SSE chunks. Nothing here knows
about processes or sockets; `generate.py` does the sending and waiting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from minisgl_edu.core import SamplingParams

DEFAULT_MAX_TOKENS = 128  # when the request names none; the scheduler also caps it by the context

# Limits on what one request may ask for. They keep every value inside what the rest of the path
# can carry (msgpack integers, int32 token ids, finite floats) and bound the work a single request
# can cause; the body-size limit of the server (`--max-request-bytes`) bounds everything else.
# Lower bounds (max_tokens >= 1, top_p > 0 ...) are checked by `SamplingParams.validate`, the one
# place the offline `LLM` shares; the schema still shows them (`json_schema_extra`).
MAX_INT32 = 2**31 - 1
MAX_STOP_STRINGS = 16  # OpenAI allows 4; SGLang users sometimes pass a few more
MAX_STOP_CHARS = 256  # per stop string: the detokenizer rescans each one per token
MAX_MESSAGES = 4096
MAX_CONTENT_PARTS = 256
MAX_MODEL_NAME_CHARS = 256
# A temperature this small means greedy: dividing float32 logits by it overflows to inf, and
# softmax of inf is NaN (SGLang treats tiny temperatures the same way).
GREEDY_TEMPERATURE_BELOW = 1e-5
# The sampler compares top_p with float32 numbers: a top_p below float32's range (5e-324) becomes
# 0 there and would drop every token (NaN probabilities). Any top_p below the top token's
# probability (at least 1/vocab, > 1e-6 for every supported vocabulary) keeps just that token,
# so raising it to 1e-6 changes nothing else. (Found by the schemathesis test.)
MIN_TOP_P = 1e-6


def check_text(value: str) -> str:
    """Reject text that cannot travel safely: lone surrogates (not encodable as UTF-8, would fail
    deep inside the path) and NUL characters (binary junk, and a classic way to truncate strings
    in C code, such as tokenizers)."""
    if "\x00" in value:
        raise ValueError("NUL characters (\\u0000) are not allowed")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (lone surrogate code points are not allowed)") from None
    return value


Text = Annotated[str, AfterValidator(check_text)]
StopString = Annotated[str, Field(max_length=MAX_STOP_CHARS), AfterValidator(check_text)]


# ---------------------------------------------------------------- request bodies (OpenAI's fields)


class _Strict(BaseModel):
    # strict: "10" is not an int and 1.5 is not a max_tokens; unknown fields are ignored, as OpenAI does.
    model_config = ConfigDict(strict=True, extra="ignore")


class TextPart(_Strict):
    type: Literal["text"]
    text: Text


class ChatMessage(_Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[Text, Annotated[list[TextPart], Field(max_length=MAX_CONTENT_PARTS)], None] = None


class StreamOptions(_Strict):
    include_usage: bool = False


class GenerateRequest(_Strict):
    model: Optional[Annotated[str, Field(max_length=MAX_MODEL_NAME_CHARS)]] = None
    max_tokens: Optional[int] = Field(None, le=MAX_INT32, json_schema_extra={"minimum": 1})
    # the newer OpenAI name of max_tokens
    max_completion_tokens: Optional[int] = Field(None, le=MAX_INT32, json_schema_extra={"minimum": 1})
    # allow_inf_nan=False: JSON has no NaN, but Python's parser accepts `NaN` and `Infinity`, and a
    # NaN temperature would pass every `<` check and poison the sampler.
    temperature: Optional[float] = Field(None, le=100.0, allow_inf_nan=False, json_schema_extra={"minimum": 0})
    top_p: Optional[float] = Field(None, allow_inf_nan=False, json_schema_extra={"exclusiveMinimum": 0, "maximum": 1})
    top_k: Optional[int] = Field(None, le=MAX_INT32, json_schema_extra={"minimum": -1})  # SGLang extension
    stop: Union[StopString, Annotated[list[StopString], Field(max_length=MAX_STOP_STRINGS)], None] = None
    seed: Optional[int] = Field(None, ge=-(2**63), le=2**63 - 1)  # torch generators take 64-bit seeds
    ignore_eos: bool = False  # SGLang extension: keep going past EOS (benchmarks)
    n: int = Field(1, ge=-MAX_INT32, le=MAX_INT32)
    stream: bool = False
    stream_options: Optional[StreamOptions] = None

    def sampling_params(self) -> SamplingParams:
        max_tokens = self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens
        params = SamplingParams(
            max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            # OpenAI's defaults: temperature 1, top_p 1. temperature 0 means greedy.
            temperature=1.0
            if self.temperature is None
            else (0.0 if 0 < self.temperature < GREEDY_TEMPERATURE_BELOW else self.temperature),
            top_p=1.0 if self.top_p is None else (MIN_TOP_P if 0 < self.top_p < MIN_TOP_P else self.top_p),
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
    messages: Annotated[list[ChatMessage], Field(max_length=MAX_MESSAGES)]


class CompletionRequest(GenerateRequest):
    prompt: Union[Text, list[int], list[Text], list[list[int]]]

    @field_validator("prompt")
    @classmethod
    def _token_ids_fit(cls, prompt: Any) -> Any:
        # The tokenizer worker checks ids against the model's vocabulary; here only what could
        # not even be carried there (ids beyond int32, e.g. 10**30, which msgpack cannot encode).
        rows = prompt if isinstance(prompt, list) and prompt and isinstance(prompt[0], list) else [prompt]
        for row in rows:
            if isinstance(row, list):
                bad = next((t for t in row if isinstance(t, int) and not 0 <= t <= MAX_INT32), None)
                if bad is not None:
                    raise ValueError(f"token id {bad} is outside the vocabulary")
        return prompt


# ---------------------------------------------------------------- errors


class APIError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        type: str = "invalid_request_error",
        param: Optional[str] = None,
        code: Optional[str] = None,
        headers: Optional[dict[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code
        self.headers = headers

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self):
        from fastapi.responses import JSONResponse

        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: Optional[str] = None
    code: Optional[str] = None


class ErrorResponse(BaseModel):
    """The shape of every error body (for the OpenAPI schema)."""

    error: ErrorDetail


# What the /v1 generation routes can answer besides 200, for the OpenAPI schema.
ERROR_RESPONSES: dict = {
    400: {"model": ErrorResponse, "description": "invalid request"},
    401: {"model": ErrorResponse, "description": "missing or wrong API key"},
    413: {"model": ErrorResponse, "description": "request body too large"},
    503: {"model": ErrorResponse, "description": "queue full (see Retry-After), shutting down, or a worker died"},
    504: {"model": ErrorResponse, "description": "the request ran past --request-timeout"},
}


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

    def chunk(
        self,
        text: Optional[str] = None,
        role: bool = False,
        finish_reason: Optional[str] = None,
        usage_field: bool = False,
    ) -> dict:
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
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return {**self._base(stream=False), "choices": [choice], "usage": usage}
