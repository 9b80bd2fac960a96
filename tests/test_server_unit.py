"""The server's pure parts, without processes or a model: arguments, request mapping.

/metrics has its own tests (tests/test_metrics.py).
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from minisgl_edu.scheduler import SchedulerConfig
from minisgl_edu.server.args import parse_args
from minisgl_edu.server.protocol import (
    DEFAULT_MAX_TOKENS,
    APIError,
    ChatCompletionRequest,
    Choice,
    CompletionRequest,
    ResponseShape,
)

SERVER_CPU_DEFAULTS = {"cpu_weights": "auto", "cpu_single_thread_decode": 4}


def test_defaults_match_the_course():
    a = parse_args([])
    assert (a.model, a.host, a.port, a.num_tokenizer, a.shell) == ("smollm2-135m", "127.0.0.1", 1919, 1, False)
    # Engine options left out stay with the scheduler's own defaults, except the two where the
    # server is faster than the exact in-process engine on purpose (README, "Which weights run where").
    assert a.scheduler_overrides() == {"device": "auto", **SERVER_CPU_DEFAULTS}
    assert (SchedulerConfig().cpu_weights, SchedulerConfig().cpu_single_thread_decode) == ("float32", 0)


def test_engine_options_are_passed_on():
    a = parse_args(
        [
            "--num-pages",
            "64",
            "--page-size",
            "8",
            "--max-running-requests",
            "4",
            "--cache",
            "naive",
            "--max-prefill-tokens",
            "256",
            "--device",
            "cpu",
            "--num-tokenizer",
            "3",
            "--api-key",
            "k",
        ]
    )
    assert a.scheduler_overrides() == {
        "device": "cpu",
        "num_pages": 64,
        "page_size": 8,
        "max_running_requests": 4,
        "cache": "naive",
        "max_prefill_tokens": 256,
        **SERVER_CPU_DEFAULTS,
    }
    assert a.num_tokenizer == 3 and a.api_key == "k"


def test_scheduler_cpu_threads_split_the_cores_between_ranks(monkeypatch):
    from minisgl_edu import process

    assert parse_args([]).cpu_threads == 0 and parse_args(["--cpu-threads", "3"]).cpu_threads == 3
    for cores, tp, want in [(1, 1, 1), (2, 1, 2), (8, 1, 8), (8, 2, 4), (8, 3, 2), (2, 4, 1)]:
        monkeypatch.setattr(process.os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))
        assert process.scheduler_cpu_threads(0, tp) == want, (cores, tp)
    assert process.scheduler_cpu_threads(5, 1) == 5  # asked for: taken as it is
    # On CUDA the host's tensors are tiny: one thread, unless asked for more.
    assert process.scheduler_cpu_threads(0, 2, cuda=True) == 1 and process.scheduler_cpu_threads(4, 1, cuda=True) == 4


def test_workers_start_with_a_short_openmp_spin_unless_the_user_chose(monkeypatch):
    from minisgl_edu import process

    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(name, raising=False)
    process.set_worker_environment()
    assert os.environ["GOMP_SPINCOUNT"] == "1000"
    monkeypatch.setenv("GOMP_SPINCOUNT", "5")
    process.set_worker_environment()
    assert os.environ["GOMP_SPINCOUNT"] == "5"  # the user's count is kept
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    process.set_worker_environment()
    assert "GOMP_SPINCOUNT" not in os.environ  # the user's policy is kept


class _Cycle:
    """An object the collector alone can free (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


def test_frozen_heap_leaves_start_up_objects_alone_and_gives_them_back():
    import gc
    import weakref

    from minisgl_edu.process import frozen_heap

    old = _Cycle()  # alive when the loop starts: start-up
    old_ref = weakref.ref(old)
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        new = _Cycle()  # made by the loop
        new_ref = weakref.ref(new)
        del old, new
        gc.collect()
        assert new_ref() is None  # what the loop makes is collected as before
        assert old_ref() is not None  # start-up's objects are not visited
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert old_ref() is None  # given back to the collector on leaving


@pytest.mark.parametrize("argv", [["--tp", "0"], ["--num-tokenizer", "0"], ["--cache", "lru"], ["--cpu-threads", "-1"]])
def test_bad_arguments_exit(argv):
    with pytest.raises(SystemExit):
        parse_args(argv)


def test_openai_fields_map_to_sampling_params():
    body = ChatCompletionRequest.model_validate(
        {
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 50,
            "max_completion_tokens": 7,
            "temperature": 0,
            "top_p": 0.5,
            "top_k": 0,
            "stop": "END",
            "seed": 3,
            "ignore_eos": True,
            "user": "u-1",  # accepted: it does not change the answer
        }
    )
    p = body.sampling_params()
    assert (p.max_tokens, p.temperature, p.top_p, p.top_k, p.stop, p.seed, p.ignore_eos) == (
        7,
        0.0,
        0.5,
        -1,
        ["END"],
        3,
        True,
    )
    assert p.is_greedy


def test_defaults_are_openai_defaults():
    p = CompletionRequest.model_validate({"prompt": "x"}).sampling_params()
    assert (p.max_tokens, p.temperature, p.top_p, p.top_k, p.stop) == (128, 1.0, 1.0, -1, [])


@pytest.mark.parametrize(
    "fields,needle",
    [
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": -1}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"top_k": -5}, "top_k"),
        ({"n": 0}, "n must be at least 1"),
        ({"best_of": 3}, "best_of"),
    ],
)
def test_invalid_sampling_is_a_400(fields, needle):
    body = CompletionRequest.model_validate({"prompt": "x", **fields})
    with pytest.raises(APIError) as e:
        body.sampling_params()
    assert e.value.status == 400 and needle in e.value.message
    assert set(e.value.body()["error"]) == {"message", "type", "param", "code"}
    assert e.value.param == next(iter(fields))


def grammar_of(**fields) -> tuple[str, str]:
    return CompletionRequest.model_validate({"prompt": "x", **fields}).sampling_params().grammar_spec


def test_vllm_and_sglang_grammar_fields_take_the_same_path():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert grammar_of(guided_json=schema) == ("json_schema", json.dumps(schema))
    assert grammar_of(guided_json=json.dumps(schema)) == ("json_schema", json.dumps(schema))
    assert grammar_of(json_schema=json.dumps(schema)) == ("json_schema", json.dumps(schema))
    assert grammar_of(guided_regex="(Yes|No)") == grammar_of(regex="(Yes|No)") == ("regex", "(Yes|No)")
    assert grammar_of(guided_grammar='root ::= "a"') == ("ebnf", 'root ::= "a"')
    # the choices, quoted as EBNF string literals (JSON's escapes are XGrammar's)
    assert grammar_of(guided_choice=["Yes", 'say "no"']) == ("ebnf", 'root ::= "Yes" | "say \\"no\\""')
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert grammar_of(response_format=fmt) == grammar_of(guided_json=schema)


@pytest.mark.parametrize(
    "fields, param",
    [
        ({"regex": "a", "guided_json": {}}, "guided_json"),
        ({"response_format": {"type": "json_object"}, "guided_choice": ["a"]}, "guided_choice"),
    ],
)
def test_two_grammar_fields_are_refused_naming_the_second(fields, param):
    with pytest.raises(APIError) as e:
        grammar_of(**fields)
    assert e.value.status == 400 and e.value.param == param


@pytest.mark.parametrize("key", ["\u00b2", "\uff11\uff12", "-1", "+1", " 1", "1.0", "0x1", ""])
def test_logit_bias_keys_are_ascii_digits(key):
    body = CompletionRequest.model_validate({"prompt": "x", "logit_bias": {key: 1}})
    with pytest.raises(APIError) as e:
        body.sampling_params()
    assert (e.value.status, e.value.param) == (400, "logit_bias")


@pytest.mark.parametrize(
    "cls, fields, param",
    [
        (CompletionRequest, {"top_logprobs": 2}, "top_logprobs"),  # completions counts with logprobs: N
        (CompletionRequest, {"include_stop_str_in_output": True}, "include_stop_str_in_output"),
        (ChatCompletionRequest, {"tools": [{"type": "function"}]}, "tools"),
    ],
)
def test_fields_the_engine_does_not_honour_are_refused_by_name(cls, fields, param):
    base = {"prompt": "x"} if cls is CompletionRequest else {"messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(APIError) as e:
        cls.model_validate({**base, **fields})
    assert (e.value.status, e.value.param, e.value.code) == (400, param, "unsupported_parameter")


def test_unused_fields_sent_empty_and_openai_fields_that_change_nothing_are_accepted():
    body = {
        "messages": [
            {"role": "user", "content": "x"},
            # what the openai client writes back when a reply is appended to the history
            {"role": "assistant", "content": "y", "refusal": None, "tool_calls": None, "function_call": None},
        ],
        "tools": None,
        "include_stop_str_in_output": False,
        "user": "u",
        "metadata": {"k": "v"},
        "store": False,
        "service_tier": "auto",
        "stream_options": {"include_usage": True, "include_obfuscation": False},
    }
    assert ChatCompletionRequest.model_validate(body).sampling_params().max_tokens == DEFAULT_MAX_TOKENS


@pytest.mark.parametrize(
    "fields, loc",
    [
        ({"guided_decoding_backend": "xgrammar"}, ("guided_decoding_backend",)),
        ({"verbosity": "low"}, ("verbosity",)),
        ({"messages": [{"role": "user", "content": "x", "name": "bob"}]}, ("messages", 0, "name")),
        ({"stream_options": {"include_usage": True, "chunk_size": 3}}, ("stream_options", "chunk_size")),
    ],
)
def test_unknown_fields_are_refused_not_dropped(fields, loc):
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as e:
        ChatCompletionRequest.model_validate({"messages": [{"role": "user", "content": "x"}], **fields})
    assert [(x["type"], x["loc"]) for x in e.value.errors()] == [("extra_forbidden", loc)]


def test_chunk_shapes():
    chat = ResponseShape(True, "chatcmpl-1", "m", 0)
    assert chat.chunk(role=True)["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chat.chunk(text="hi")["choices"][0]["delta"] == {"content": "hi"}
    last = chat.chunk(finish_reason="stop", usage_field=True)
    assert last["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert last["usage"] is None and last["object"] == "chat.completion.chunk"
    text = ResponseShape(False, "cmpl-1", "m", 0).full([Choice("abc", "length")], {"prompt_tokens": 1})
    assert text["object"] == "text_completion" and text["choices"][0]["text"] == "abc"
    two = chat.full([Choice("a", "stop"), Choice("b", "length")], {})
    assert [(c["index"], c["message"]["content"], c["finish_reason"]) for c in two["choices"]] == [
        (0, "a", "stop"),
        (1, "b", "length"),
    ]
    assert chat.chunk(text="x", index=3)["choices"][0]["index"] == 3


def test_logprobs_shapes():
    entry = {
        "token": " hi",
        "logprob": -0.5,
        "bytes": [32, 104, 105],
        "top_logprobs": [
            {"token": " hi", "logprob": -0.5, "bytes": [32, 104, 105]},
            {"token": "!", "logprob": -1.5, "bytes": [33]},
        ],
    }
    chat = ResponseShape(True, "chatcmpl-1", "m", 0)
    assert chat.logprobs([entry]) == {"content": [entry], "refusal": None}
    text = ResponseShape(False, "cmpl-1", "m", 0).logprobs([entry, {**entry, "token": "yo"}], text_offset=4)
    assert text == {
        "tokens": [" hi", "yo"],
        "token_logprobs": [-0.5, -0.5],
        "top_logprobs": [{" hi": -0.5, "!": -1.5}, {" hi": -0.5, "!": -1.5}],
        "text_offset": [4, 7],
    }


def test_socket_dirs_of_dead_servers_are_removed():
    from minisgl_edu.server.launch import _remove_stale_ipc_dirs

    tmp = tempfile.gettempdir()
    dead = os.path.join(tmp, "minisgl-999999999-test")  # no such pid
    alive = os.path.join(tmp, f"minisgl-{os.getpid()}-test")
    for d in (dead, alive):
        os.makedirs(d, exist_ok=True)
    try:
        _remove_stale_ipc_dirs()
        assert not os.path.exists(dead) and os.path.isdir(alive)
    finally:
        for d in (dead, alive):
            if os.path.isdir(d):
                os.rmdir(d)


def test_default_running_limit_follows_the_device_and_the_kv_pool():
    from types import SimpleNamespace

    import torch

    from minisgl_edu.engine.engine import Engine

    auto = Engine._auto_max_running
    cpu = SimpleNamespace(device=torch.device("cpu"), page_size=16)
    cuda = SimpleNamespace(device=torch.device("cuda", 0), page_size=16)
    assert auto(cpu, 10**6) == 32  # the CPU keeps its small default, whatever the pool
    assert auto(cuda, 68_631) == 256  # an H200's pool for Qwen3-0.6B: ~1.1M tokens
    assert auto(cuda, 20_000) == 156  # 320k tokens at 2,048 each
    assert auto(cuda, 1_000) == 32  # a small GPU: never below the CPU's


def _replies_in_queue(*replies):
    """A stand-in for the API server's state with one request (uid 5) whose replies are queued."""
    import asyncio
    from types import SimpleNamespace

    queue = asyncio.Queue()
    for r in replies:
        queue.put_nowait(r)
    return SimpleNamespace(ack_map={5: queue}), queue


def _text(text, tokens, finished=False, reason=None, lp=()):
    from minisgl_edu.message import UserReply

    return UserReply(5, text, finished, reason, num_output_tokens=tokens, logprobs=[{"token": t} for t in lp])


def test_replies_waiting_behind_one_go_out_as_one():
    import asyncio

    from minisgl_edu.message import UserReply
    from minisgl_edu.server.generate import Generation, next_reply

    async def run():
        prompt = UserReply(5, "", False, num_prompt_tokens=12, cached_tokens=8)
        state, queue = _replies_in_queue(
            prompt, _text(" a", 1, lp="a"), _text(" b", 2, lp="b"), _text(" c", 4, lp="cd")
        )
        gen = Generation(5)
        first = await next_reply(state, gen)
        assert (first.incremental_output, first.num_output_tokens, first.finished) == (" a b c", 4, False)
        assert [e["token"] for e in first.logprobs] == ["a", "b", "c", "d"]
        assert (gen.num_prompt_tokens, gen.cached_tokens, gen.num_output_tokens) == (12, 8, 4)
        # Nothing waits now: the next reply is taken alone, as it comes.
        queue.put_nowait(_text(" e", 5))
        second = await next_reply(state, gen)
        assert (second.incremental_output, second.num_output_tokens) == (" e", 5)
        assert queue.empty()

    asyncio.run(run())


def test_joining_stops_at_the_last_reply_and_keeps_an_error_for_the_next_call():
    import asyncio

    from minisgl_edu.message import UserReply
    from minisgl_edu.server.generate import Generation, next_reply

    async def run():
        state, _ = _replies_in_queue(
            UserReply(5, "", False, num_prompt_tokens=3), _text(" a", 1), _text(" b", 2, True, "length")
        )
        gen = Generation(5)
        last = await next_reply(state, gen)
        assert (last.incremental_output, last.finished, last.finish_reason) == (" a b", True, "length")
        assert gen.done and gen.finish_reason == "length"

        error = UserReply(6, "", True, "abort", error="the scheduler died")
        state, _ = _replies_in_queue(UserReply(5, "", False, num_prompt_tokens=3), _text(" a", 1), error)
        gen = Generation(5)
        text = await next_reply(state, gen)
        assert text.incremental_output == " a" and not text.error and not gen.done
        assert (await next_reply(state, gen)) is error and gen.done

    asyncio.run(run())


def test_the_deadline_timer_ends_a_request_after_the_text_before_it():
    import asyncio

    from minisgl_edu.message import UserReply
    from minisgl_edu.server.generate import TIMED_OUT, Generation, RequestTimedOut, next_reply

    async def run():
        state, _ = _replies_in_queue(UserReply(5, "", False, num_prompt_tokens=3), _text(" a", 1), TIMED_OUT)
        gen = Generation(5)
        assert (await next_reply(state, gen)).incremental_output == " a"
        with pytest.raises(RequestTimedOut):
            await next_reply(state, gen)
        assert not gen.done  # so end_request aborts it in the scheduler

    asyncio.run(run())
