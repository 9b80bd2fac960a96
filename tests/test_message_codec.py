"""Round trips of every message type through the msgpack codec (no model, no processes)."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.message import (
    AbortBackendMsg,
    AbortMsg,
    BatchBackendMsg,
    BatchFrontendMsg,
    BatchTokenizerMsg,
    DetokenizeMsg,
    ExitMsg,
    SchedulerStatsMsg,
    TokenizeMsg,
    UserMsg,
    UserReply,
    backend,
    frontend,
    tokenizer,
)
from minisgl_edu.message.codec import decode, encode, register

PARAMS = SamplingParams(
    max_tokens=7, temperature=0.5, top_k=20, top_p=0.9, ignore_eos=True, stop=["\n\n", "END"], seed=1234
)

EXAMPLES = [
    TokenizeMsg(uid=1, text="hello", sampling_params=PARAMS),
    TokenizeMsg(uid=2, text=[{"role": "user", "content": "héllo 👋"}], sampling_params=SamplingParams()),
    TokenizeMsg(uid=3, text=[1, 2, 3], sampling_params=PARAMS),
    AbortMsg(uid=4),
    DetokenizeMsg(uid=5, next_token=42, finished=False, stop=["x"]),
    DetokenizeMsg(uid=6, next_token=-1, finished=True, finish_reason="abort", error="too long"),
    BatchTokenizerMsg(
        data=[AbortMsg(uid=7), DetokenizeMsg(uid=8, next_token=1, finished=True, finish_reason="length")]
    ),
    UserMsg(uid=9, input_ids=list(range(1000)), sampling_params=PARAMS),
    AbortBackendMsg(uid=10),
    BatchBackendMsg(data=[UserMsg(uid=11, input_ids=[5], sampling_params=SamplingParams()), AbortBackendMsg(uid=12)]),
    ExitMsg(),
    UserReply(
        uid=13,
        incremental_output="日本語 ✓",
        finished=True,
        finish_reason="stop",
        num_prompt_tokens=3,
        num_output_tokens=4,
    ),
    UserReply(uid=14, incremental_output="", finished=True, error="prompt too long"),
    BatchFrontendMsg(data=[UserReply(uid=15, incremental_output="a", finished=False)]),
    SchedulerStatsMsg(stats={"kv_pages_total": 64, "kv_pages_free": 60}),
    PARAMS,
]


@pytest.mark.parametrize("msg", EXAMPLES, ids=lambda m: type(m).__name__)
def test_round_trip(msg):
    data = encode(msg)
    assert isinstance(data, bytes)
    back = decode(data)
    assert type(back) is type(msg)
    assert back == msg


def test_every_message_class_has_an_example():
    """A new message class must get a round-trip example above."""
    classes = {
        v
        for m in (backend, frontend, tokenizer)
        for v in vars(m).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == m.__name__
    }
    covered = {type(m) for m in EXAMPLES}
    for batch in EXAMPLES:
        if isinstance(batch, (BatchBackendMsg, BatchTokenizerMsg, BatchFrontendMsg)):
            covered |= {type(x) for x in batch.data}
    missing = {c.__name__ for c in classes} - {c.__name__ for c in covered} - {"BaseBackendMsg"}
    assert not missing


def test_nested_sampling_params_is_a_dataclass_again():
    back = decode(encode(UserMsg(uid=1, input_ids=[1], sampling_params=PARAMS)))
    assert isinstance(back.sampling_params, SamplingParams)
    assert back.sampling_params.stop == ["\n\n", "END"]
    assert back.sampling_params.seed == 1234


def test_the_wire_format_is_plain_msgpack_with_a_type_tag():
    raw = msgpack.unpackb(encode(AbortMsg(uid=3)))
    assert raw == {"__type__": "AbortMsg", "uid": 3}


def test_unknown_type_is_refused():
    data = msgpack.packb({"__type__": "os.system", "command": "echo hi"})
    with pytest.raises(ValueError, match="unknown message type"):
        decode(data)


def test_unregistered_dataclass_is_refused():
    @dataclasses.dataclass
    class Secret:
        x: int

    with pytest.raises(TypeError, match="not a registered"):
        encode(Secret(1))
    register(Secret)
    assert decode(encode(Secret(1))) == Secret(1)


def test_a_plain_dict_field_may_not_pose_as_a_message():
    # Decoded, it would become an AbortMsg: refused on the way out instead.
    with pytest.raises(ValueError, match="reserved key"):
        encode(SchedulerStatsMsg(stats={"__type__": "AbortMsg", "uid": 1}))


def test_a_prompt_and_a_step_of_messages_stay_plain_lists():
    # msgpack writes the token ids itself (no callback per id): they come back as the same list.
    ids = list(range(5000))
    msg = decode(encode(UserMsg(uid=1, input_ids=ids, sampling_params=PARAMS)))
    assert msg.input_ids == ids and msg.sampling_params == PARAMS
    step = [DetokenizeMsg(uid=u, next_token=100 + u, finished=u == 3, stop=["\\n"]) for u in range(4)]
    assert decode(encode(step)) == step
