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

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from minisgl_edu.core import MAX_REPETITION_PENALTY, MAX_TOP_LOGPROBS, MIN_REPETITION_PENALTY, SamplingParams

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
MAX_LOGIT_BIAS_ENTRIES = 1024  # OpenAI allows 300
MAX_GRAMMAR_CHARS = 64 << 10  # a JSON schema, regex or EBNF grammar
MAX_CHOICES = 256  # vLLM's guided_choice: the answers allowed

# OpenAI request fields this engine does not do. Each gets a 400 that names it, when it is set to
# anything but null/false/[] (what clients send for "not used"), rather than being dropped.
UNSUPPORTED_FIELDS = {
    "tools": "tool calling is not supported",
    "tool_choice": "tool calling is not supported",
    "parallel_tool_calls": "tool calling is not supported",
    "functions": "function calling is not supported",
    "function_call": "function calling is not supported",
    "audio": "audio output is not supported",
    "modalities": "only text output is supported",
    "prediction": "predicted outputs are not supported",
    "web_search_options": "web search is not supported",
    "reasoning_effort": "this model has no reasoning setting",
    "echo": "echo is not supported",
    "suffix": "suffix (insertion) is not supported",
    "min_p": "min_p is not supported (top_k and top_p are)",
    "min_tokens": "min_tokens is not supported",
    "stop_token_ids": "stop_token_ids is not supported (use stop strings)",
    "structural_tag": "structural tags are not supported (use response_format)",
    # vLLM's: the answer would keep the stop string (chapter 03's stretch exercise builds it)
    "include_stop_str_in_output": "keeping the stop string in the answer is not supported",
}

# Every other field a request body may hold is refused by name (`extra="forbid"` below): a field
# this server silently dropped would give the client an answer it did not ask for. The OpenAI
# fields that never change an answer (user, metadata, store, ...) are declared and accepted.


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
Grammar = Annotated[str, Field(max_length=MAX_GRAMMAR_CHARS), AfterValidator(check_text)]  # a regex or EBNF
ChoiceText = Annotated[str, Field(min_length=1, max_length=MAX_GRAMMAR_CHARS), AfterValidator(check_text)]


def _schema_text(schema: str, field: str) -> str:
    if len(schema) > MAX_GRAMMAR_CHARS:
        raise APIError(400, f"{field}: the JSON schema is too large", param=field, code="invalid_value")
    return schema


# ---------------------------------------------------------------- request bodies (OpenAI's fields)


class _Strict(BaseModel):
    # strict: "10" is not an int and 1.5 is not a max_tokens; forbid: a field this server does not
    # read is a 400 that names it (errors.py words it), never dropped.
    model_config = ConfigDict(strict=True, extra="forbid")


class TextPart(_Strict):
    type: Literal["text"]
    text: Text


class ChatMessage(_Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[Text, Annotated[list[TextPart], Field(max_length=MAX_CONTENT_PARTS)], None] = None
    # What the openai client writes back when a reply is appended to the history: accepted empty.
    # (A `name`, a tool call or audio would change the answer; the chat template has no place for them.)
    refusal: Optional[Literal[""]] = None
    tool_calls: Optional[Annotated[list, Field(max_length=0)]] = None
    function_call: None = None
    audio: None = None
    annotations: Optional[Annotated[list, Field(max_length=0)]] = None


class StreamOptions(_Strict):
    include_usage: bool = False
    include_obfuscation: Optional[bool] = None  # OpenAI pads chunks against side channels; none here


class JsonSchemaFormat(_Strict):
    name: Optional[str] = None
    description: Optional[str] = None
    # `schema` in JSON; a plain attribute of that name would shadow BaseModel's own
    schema_: Optional[dict] = Field(None, alias="schema")
    strict: Optional[bool] = None


class ResponseFormat(_Strict):
    """OpenAI's `response_format`: plain text, any JSON object, or JSON under a schema."""

    type: Literal["text", "json_object", "json_schema"]
    json_schema: Optional[JsonSchemaFormat] = None


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
    best_of: Optional[int] = Field(None, ge=-MAX_INT32, le=MAX_INT32)
    stream: bool = False
    stream_options: Optional[StreamOptions] = None
    # The logits chain (engine/logits_chain.py)
    presence_penalty: Optional[float] = Field(None, ge=-2.0, le=2.0, allow_inf_nan=False)
    frequency_penalty: Optional[float] = Field(None, ge=-2.0, le=2.0, allow_inf_nan=False)
    # SGLang / vLLM extension; 1 is off
    repetition_penalty: Optional[float] = Field(
        None, ge=MIN_REPETITION_PENALTY, le=MAX_REPETITION_PENALTY, allow_inf_nan=False
    )
    logit_bias: Optional[
        Annotated[
            dict[str, Annotated[float, Field(ge=-100.0, le=100.0, allow_inf_nan=False)]],
            Field(max_length=MAX_LOGIT_BIAS_ENTRIES),
        ]
    ] = None
    # Structured output, one of: OpenAI's response_format; SGLang's regex, ebnf and json_schema;
    # vLLM's guided_json, guided_regex, guided_choice and guided_grammar. All take the same path
    # (`grammar_params`, then XGrammar in the scheduler).
    response_format: Optional[ResponseFormat] = None
    regex: Optional[Grammar] = None
    ebnf: Optional[Grammar] = None
    json_schema: Union[Grammar, dict, None] = None  # SGLang sends the schema as text
    guided_json: Union[Grammar, dict, None] = None
    guided_regex: Optional[Grammar] = None
    guided_choice: Optional[Annotated[list[ChoiceText], Field(min_length=1, max_length=MAX_CHOICES)]] = None
    guided_grammar: Optional[Grammar] = None
    # OpenAI fields that never change an answer: read, and not used
    user: Optional[str] = None
    metadata: Optional[dict[str, str]] = None
    store: Optional[bool] = None
    service_tier: Optional[str] = None
    prompt_cache_key: Optional[str] = None
    prompt_cache_retention: Optional[str] = None
    safety_identifier: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _refuse_unsupported(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, why in cls.refused_fields().items():
                if data.get(name) not in (None, False, []):
                    raise APIError(400, f"{name}: {why}", param=name, code="unsupported_parameter")
            # null/false/[] is what clients send for "not used": accepted, then dropped here so
            # that `extra="forbid"` does not refuse it as unknown.
            data = {k: v for k, v in data.items() if k not in cls.refused_fields()}
        return data

    @classmethod
    def refused_fields(cls) -> dict[str, str]:
        """Field name -> why it is refused (the endpoints add their own)."""
        return UNSUPPORTED_FIELDS

    def logprob_params(self) -> tuple[bool, int]:
        """(logprobs wanted, how many top alternatives): the two endpoints spell it differently."""
        raise NotImplementedError

    def grammar_field(self) -> Optional[str]:
        """The name of the request field that asks for structured output, if one does (for errors)."""
        given = self._grammar_fields()
        return given[0] if given else None

    def _grammar_fields(self) -> list[str]:
        names = ["regex", "ebnf", "json_schema", "guided_json", "guided_regex", "guided_choice", "guided_grammar"]
        given = [n for n in names if getattr(self, n) is not None]
        if self.response_format is not None and self.response_format.type != "text":
            given.insert(0, "response_format")
        return given

    def grammar_params(self) -> dict:
        """The SamplingParams field of the requested structured output ({} without one): each
        request field becomes a JSON schema, a regex or an EBNF grammar for XGrammar."""
        given = self._grammar_fields()
        if len(given) > 1:
            raise APIError(
                400,
                f"give at most one of {', '.join(given)} (each asks for structured output)",
                param=given[1],
                code="invalid_value",
            )
        if not given:
            return {}
        name = given[0]
        if name in ("regex", "guided_regex"):
            return {"regex": getattr(self, name)}
        if name in ("ebnf", "guided_grammar"):
            return {"ebnf": getattr(self, name)}
        if name == "guided_choice":
            # One of the strings, exactly: an EBNF alternative of string literals (JSON's string
            # escapes are also XGrammar's, so any text is quoted safely).
            return {"ebnf": "root ::= " + " | ".join(json.dumps(c, ensure_ascii=False) for c in self.guided_choice)}
        if name in ("json_schema", "guided_json"):
            value = getattr(self, name)
            return {"json_schema": _schema_text(value if isinstance(value, str) else json.dumps(value), name)}
        fmt = self.response_format
        if fmt.type == "json_object":
            return {"json_schema": json.dumps({"type": "object"})}
        if fmt.json_schema is None or fmt.json_schema.schema_ is None:
            raise APIError(
                400, "response_format.json_schema.schema is required", param="response_format", code="invalid_value"
            )
        return {"json_schema": _schema_text(json.dumps(fmt.json_schema.schema_), "response_format")}

    def logit_bias_ids(self) -> dict[int, float]:
        out = {}
        for key, bias in (self.logit_bias or {}).items():
            # ASCII digits only: str.isdigit() also takes "²" (which int() refuses) and "１２"
            # (full-width, which int() reads as 12).
            if not (key.isascii() and key.isdigit()) or int(key) > MAX_INT32:
                raise APIError(400, f"logit_bias: {key!r} is not a token id", param="logit_bias", code="invalid_value")
            out[int(key)] = bias
        return out

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
            presence_penalty=self.presence_penalty or 0.0,
            frequency_penalty=self.frequency_penalty or 0.0,
            repetition_penalty=1.0 if self.repetition_penalty is None else self.repetition_penalty,
            logit_bias=self.logit_bias_ids(),
            n=self.n,
            **self.grammar_params(),
        )
        params.logprobs, params.top_logprobs = self.logprob_params()
        if self.n < 1:
            raise APIError(400, "n must be at least 1", param="n", code="invalid_value")
        if self.best_of is not None and self.best_of != self.n:
            raise APIError(400, "best_of is not supported (use n)", param="best_of", code="unsupported_parameter")
        try:
            params.validate()
        except ValueError as e:
            # each message begins with the field's name
            name = str(e).split(" ", 1)[0]
            raise APIError(
                400, str(e), param=name if name in type(self).model_fields else None, code="invalid_value"
            ) from None
        return params

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


class ChatCompletionRequest(GenerateRequest):
    messages: Annotated[list[ChatMessage], Field(max_length=MAX_MESSAGES)]
    logprobs: bool = False
    top_logprobs: Optional[int] = Field(None, ge=0, le=MAX_TOP_LOGPROBS)

    def logprob_params(self) -> tuple[bool, int]:
        if self.top_logprobs and not self.logprobs:
            raise APIError(400, "top_logprobs needs logprobs: true", param="top_logprobs", code="invalid_value")
        return self.logprobs, self.top_logprobs or 0


class CompletionRequest(GenerateRequest):
    prompt: Union[Text, list[int], list[Text], list[list[int]]]
    # the legacy shape: the number of top alternatives, 0 for the sampled token's logprob alone
    logprobs: Optional[int] = Field(None, ge=0, le=MAX_TOP_LOGPROBS)

    def logprob_params(self) -> tuple[bool, int]:
        return self.logprobs is not None, self.logprobs or 0

    @classmethod
    def refused_fields(cls) -> dict[str, str]:
        # chat's name for the count; on this endpoint `logprobs` itself is the count, as in OpenAI's
        return {
            **UNSUPPORTED_FIELDS,
            "top_logprobs": "not a field of /v1/completions (logprobs: N asks for N alternatives)",
        }

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
        index: int = 0,
        logprobs: Optional[dict] = None,
    ) -> dict:
        if self.chat:
            delta: dict = {}
            if role:
                delta["role"] = "assistant"
                delta["content"] = ""
            if text:
                delta["content"] = text
            choice = {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish_reason}
        else:
            choice = {"index": index, "text": text or "", "logprobs": logprobs, "finish_reason": finish_reason}
        out = {**self._base(stream=True), "choices": [choice]}
        if usage_field:
            out["usage"] = None  # OpenAI: null on every chunk when usage is requested, set on the last
        return out

    def usage_chunk(self, usage: dict) -> dict:
        return {**self._base(stream=True), "choices": [], "usage": usage}

    def full(self, choices: list[Choice], usage: dict) -> dict:
        out = []
        for index, c in enumerate(choices):
            if self.chat:
                message = {"role": "assistant", "content": c.text}
                out.append(
                    {"index": index, "message": message, "logprobs": c.logprobs, "finish_reason": c.finish_reason}
                )
            else:
                out.append({"index": index, "text": c.text, "logprobs": c.logprobs, "finish_reason": c.finish_reason})
        return {**self._base(stream=False), "choices": out, "usage": usage}

    def logprobs(self, entries: list[dict], text_offset: int = 0) -> dict:
        """The `logprobs` field of a choice for these tokens (the detokenizer's chat-shaped entries):
        chat's `{"content": [...]}`, or the completions API's parallel lists, where `text_offset`
        counts the characters of the tokens before these (each token's own text, as vLLM does)."""
        if self.chat:
            return {"content": entries, "refusal": None}
        offsets = []
        for e in entries:
            offsets.append(text_offset)
            text_offset += len(e["token"])
        return {
            "tokens": [e["token"] for e in entries],
            "token_logprobs": [e["logprob"] for e in entries],
            "top_logprobs": [{t["token"]: t["logprob"] for t in e["top_logprobs"]} for e in entries],
            "text_offset": offsets,
        }


@dataclass
class Choice:
    """One finished answer of a non-streaming response."""

    text: str
    finish_reason: Optional[str]
    logprobs: Optional[dict] = None
