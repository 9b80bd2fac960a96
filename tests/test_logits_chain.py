"""The logits chain, logprobs and n answers in the engine: penalties and logit bias against a plain
reference, a grammar's mask on greedy rows, logprobs from the raw logits, n requests sharing the
prompt's pages, and every page back after an abort."""

from __future__ import annotations

import json
import math

import pytest
import torch
from test_mixed_batches import tokens_by_uid
from test_scheduler import make

from minisgl_edu.core import Req, ReqStatus, SamplingParams
from minisgl_edu.engine.logits_chain import process_logits
from minisgl_edu.engine.logprobs import take_logprobs

# ---------------------------------------------------------------- the chain on hand-made logits


def req(input_ids, output_ids, **params) -> Req:
    r = Req(uid=0, input_ids=list(input_ids), sampling_params=SamplingParams(**params))
    r.output_ids = list(output_ids)
    return r


def reference(logits: list[float], r: Req) -> list[float]:
    """The definitions, one token at a time, in plain Python."""
    sp = r.sampling_params
    out = []
    for t, x in enumerate(logits):
        if t in r.input_ids or t in r.output_ids:
            x = x / sp.repetition_penalty if x > 0 else x * sp.repetition_penalty
        c = r.output_ids.count(t)
        x -= sp.frequency_penalty * c + (sp.presence_penalty if c else 0.0)
        x += sp.logit_bias.get(t, 0.0)
        out.append(x)
    return out


CASES = [
    dict(repetition_penalty=1.3),
    dict(frequency_penalty=0.7),
    dict(presence_penalty=1.1),
    dict(frequency_penalty=-0.5, presence_penalty=0.4, repetition_penalty=0.8),
    dict(logit_bias={1: 5.0, 6: -100.0}),
    dict(repetition_penalty=2.0, frequency_penalty=1.0, presence_penalty=0.5, logit_bias={3: 2.5}),
]


@pytest.mark.parametrize("params", CASES)
def test_chain_matches_the_definitions(params):
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 8, generator=g) * 3
    reqs = [
        req([0, 1, 2], [2, 2, 5], **params),  # a prompt token repeated in the output
        req([7], [], **params),  # nothing generated yet: only the prompt counts, for repetition
        req([4, 4], [3, 4, 6, 6, 6], **params),
    ]
    before = logits.clone()
    out = process_logits(logits, reqs)
    assert torch.equal(logits, before), "the chain must not change the logits it was given (logprobs read them)"
    for i, r in enumerate(reqs):
        assert out[i].tolist() == pytest.approx(reference(logits[i].tolist(), r), abs=1e-5)


def test_rows_without_the_chain_are_untouched_and_nothing_is_copied_without_it():
    logits = torch.randn(3, 8)
    plain = [req([1], [2]), req([3], [3])]
    assert process_logits(logits[:2], plain) is logits[:2] or torch.equal(process_logits(logits[:2], plain), logits[:2])
    same = logits[:2]
    assert process_logits(same, plain) is same  # no copy, no kernel
    mixed = [req([1], [2]), req([3], [3, 3], frequency_penalty=1.0), req([5], [5])]
    out = process_logits(logits, mixed)
    assert torch.equal(out[0], logits[0]) and torch.equal(out[2], logits[2])
    assert out[1, 3] == pytest.approx(float(logits[1, 3]) - 2.0)


def test_logprobs_come_from_the_raw_logits_and_only_for_the_rows_that_ask():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
    reqs = [req([0], [], logprobs=True, top_logprobs=2, logit_bias={3: 50.0}), req([0], [])]
    tokens = torch.tensor([3, 1])  # row 0 took the biased token
    lp = take_logprobs(logits, tokens, reqs)
    rows = lp.per_row(2)
    raw = torch.log_softmax(logits[0], -1)
    assert rows[1] is None
    assert rows[0].logprob == pytest.approx(float(raw[3]))  # the model's own view of token 3: unlikely
    assert [t for t, _ in rows[0].top] == [0, 1]
    assert [v for _, v in rows[0].top] == pytest.approx([float(raw[0]), float(raw[1])])
    assert take_logprobs(logits, tokens, [req([0], []), req([0], [])]) is None


# ---------------------------------------------------------------- on the engine (tiny model)


PROMPT = [(i * 104729) % 49000 + 100 for i in range(23)]  # 23 tokens: 5 full pages of 4, 3 more


def test_n_answers_share_the_prompt_pages(tiny_model_dir):
    s = make(tiny_model_dir)
    sp = SamplingParams(max_tokens=6, ignore_eos=True, n=4)
    leader = s.add_request(0, PROMPT, sp)
    followers = [s.add_request(uid, PROMPT, sp, prompt_leader=0) for uid in (1, 2, 3)]
    records = s.run_until_idle()
    computed = {uid: 0 for uid in range(4)}
    for rec in records:
        for uid, start, n in rec.items:
            if start < len(PROMPT):
                computed[uid] += n
    assert computed[0] == len(PROMPT)  # the first answer computes the whole prompt ...
    for f in followers:  # ... the others only what does not fill a page, after its prefill
        assert f.prefix_len == 20 and computed[f.uid] == len(PROMPT) - 20
    assert leader.prefix_len == 0
    out = tokens_by_uid(s)
    assert out[0] == out[1] == out[2] == out[3] and len(out[0]) == 6  # greedy: the same answer
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages


def test_n_answers_with_the_naive_cache_and_after_the_leader_is_aborted(tiny_model_dir):
    s = make(tiny_model_dir, cache="naive")
    sp = SamplingParams(max_tokens=4, ignore_eos=True, n=2)
    s.add_request(0, PROMPT, sp)
    s.add_request(1, PROMPT, sp, prompt_leader=0)
    s.run_until_idle()
    out = tokens_by_uid(s)
    assert out[0] == out[1] and len(out[0]) == 4
    s.cache.check()
    assert s.cache.num_free == s.cache.num_pages
    # The leader goes away before its prefill: its follower does not wait for ever.
    s = make(tiny_model_dir)
    s.add_request(0, PROMPT, sp)
    f = s.add_request(1, PROMPT, sp, prompt_leader=0)
    s.abort(0)
    s.run_until_idle()
    assert f.is_finished and len(f.output_ids) == 4
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages


@pytest.mark.parametrize("when", [1, 2, 3, 5])
def test_abort_with_n_and_shared_pages_returns_every_page(tiny_model_dir, when):
    s = make(tiny_model_dir)
    sp = SamplingParams(max_tokens=8, ignore_eos=True, n=3)
    s.add_request(0, PROMPT, sp)
    for uid in (1, 2):
        s.add_request(uid, PROMPT, sp, prompt_leader=0)
    for _ in range(when):
        s.step()
        s.cache.check()
    for uid in (0, 1, 2):
        s.abort(uid)
        s.cache.check()
    s.run_until_idle()
    assert s.is_idle and not s.reqs
    assert s.cache.num_available == s.cache.num_pages
    assert s.cache.prefix_cache.num_evictable == s.cache.prefix_cache.num_cached  # nothing left locked


def test_penalised_greedy_tokens_follow_the_chain(tiny_model_dir):
    """The engine's greedy token is the argmax of the chain's logits: a bias of +100 on a token
    makes it the answer, and a huge frequency penalty forbids repeating an output token."""
    s = make(tiny_model_dir)
    s.add_request(0, PROMPT, SamplingParams(max_tokens=5, ignore_eos=True, logit_bias={4242: 100.0}))
    s.add_request(1, PROMPT, SamplingParams(max_tokens=12, ignore_eos=True, frequency_penalty=2.0, logit_bias={7: 10}))
    s.add_request(2, PROMPT, SamplingParams(max_tokens=5, ignore_eos=True))
    s.run_until_idle()
    out = tokens_by_uid(s)
    assert out[0] == [4242] * 5
    # token 7 first (bias 10 beats the tiny model's logits), then each use costs it 2 more, until
    # other tokens win: the bias alone would give 7 every time
    assert out[1][0] == 7 and 1 < out[1].count(7) < 12
    assert out[2] != out[0]


REGEX = r"(yes|no), [0-9]{2}"


def test_grammar_masks_greedy_rows_and_finishes_with_stop(tiny_model_dir):
    s = make(tiny_model_dir)
    r = s.add_request(0, PROMPT, SamplingParams(max_tokens=20, regex=REGEX))
    plain = s.add_request(1, PROMPT, SamplingParams(max_tokens=20, ignore_eos=True))
    s.run_until_idle()
    text = s.tokenizer.decode(r.output_ids, skip_special_tokens=True)
    import re

    assert re.fullmatch(REGEX, text), text
    assert r.finish_reason == "stop" and r.output_ids[-1] in s.eos_ids
    assert plain.finish_reason == "length"
    s.cache.check()


def test_grammar_that_cannot_finish_in_max_tokens_ends_with_length(tiny_model_dir):
    s = make(tiny_model_dir)
    r = s.add_request(0, PROMPT, SamplingParams(max_tokens=3, regex="[a-z]{40}"))
    s.run_until_idle()
    assert r.finish_reason == "length" and len(r.output_ids) == 3


def test_bad_grammar_is_rejected_with_the_compiler_message(tiny_model_dir):
    s = make(tiny_model_dir)
    assert s.add_request(0, PROMPT, SamplingParams(regex="(unclosed")) is None
    assert s.add_request(1, PROMPT, SamplingParams(json_schema="{not json")) is None
    msgs = s.io.drain()
    assert [m.uid for m in msgs] == [0, 1] and all(m.finished and m.error for m in msgs)
    assert msgs[0].error.startswith("invalid regex") and msgs[1].error.startswith("invalid json_schema")


def test_overlap_loop_gives_the_same_tokens_with_grammars_and_penalties(tiny_model_dir):
    """The overlap loop lets the batch in flight land first when a request needs its tokens on
    the host (mask, penalties); the tokens are those of the normal loop."""
    params = [
        SamplingParams(max_tokens=10, regex=REGEX),
        SamplingParams(max_tokens=10, ignore_eos=True, frequency_penalty=1.5, repetition_penalty=1.2),
        SamplingParams(max_tokens=10, ignore_eos=True, logprobs=True, top_logprobs=3),
        SamplingParams(max_tokens=10, ignore_eos=True),
    ]
    runs = []
    for overlap in (False, True):
        s = make(tiny_model_dir, overlap=overlap)
        for uid, sp in enumerate(params):
            s.add_request(uid, [t + uid for t in PROMPT], sp)
        s.run_until_idle(overlap=overlap)
        msgs = s.io.drain()
        runs.append([(m.uid, m.next_token, m.logprob, m.top_logprobs) for m in msgs if m.next_token >= 0])
        s.cache.check()
    assert sorted(runs[0], key=lambda x: x[0]) == sorted(runs[1], key=lambda x: x[0])


def test_logprobs_travel_with_each_token(tiny_model_dir):
    s = make(tiny_model_dir)
    s.add_request(0, PROMPT, SamplingParams(max_tokens=4, ignore_eos=True, logprobs=True, top_logprobs=5))
    s.add_request(1, PROMPT, SamplingParams(max_tokens=4, ignore_eos=True))
    s.run_until_idle()
    msgs = [m for m in s.io.drain() if m.next_token >= 0]
    mine = [m for m in msgs if m.uid == 0]
    assert all(m.logprob is None and m.top_logprobs == [] for m in msgs if m.uid == 1)
    for m in mine:  # greedy: the sampled token is the most likely one
        assert len(m.top_logprobs) == 5 and m.top_logprobs[0][0] == m.next_token
        assert m.logprob == pytest.approx(m.top_logprobs[0][1]) and m.logprob <= 0
        assert math.fsum(math.exp(v) for _, v in m.top_logprobs) <= 1 + 1e-5


def test_requests_params_travel_through_the_codec():
    from minisgl_edu.message import TokenizeMsg, UserMsg
    from minisgl_edu.message.codec import decode, encode

    sp = SamplingParams(logit_bias={"12": 3.5}, json_schema=json.dumps({"type": "object"}), logprobs=True, n=3)
    assert sp.logit_bias == {12: 3.5}
    for msg in (UserMsg(5, [1, 2], sp, prompt_leader=4), TokenizeMsg(4, "hi", sp, more_uids=[5, 6])):
        assert decode(encode(msg)) == msg


@pytest.mark.parametrize(
    "params, needle",
    [
        (dict(top_logprobs=21), "top_logprobs"),
        (dict(n=0), "n must"),
        (dict(repetition_penalty=0.0), "repetition_penalty"),
        (dict(repetition_penalty=1e-300), "repetition_penalty"),  # 0 in float32: logits divided by zero
        (dict(repetition_penalty=2.5), "repetition_penalty"),  # SGLang's range ends at 2, as the server's
        (dict(presence_penalty=3.0), "presence_penalty"),
        (dict(logit_bias={5: 101.0}), "logit_bias"),
        (dict(regex="a", ebnf='root ::= "a"'), "at most one"),
    ],
)
def test_sampling_params_refuse_bad_values(params, needle):
    with pytest.raises(ValueError, match=needle):
        SamplingParams(**params).validate()


def test_status_of_a_follower_while_it_waits(tiny_model_dir):
    s = make(tiny_model_dir)
    sp = SamplingParams(max_tokens=2, ignore_eos=True, n=2)
    leader = s.add_request(0, PROMPT, sp)
    follower = s.add_request(1, PROMPT, sp, prompt_leader=0)
    first = s.step()
    assert [uid for uid, _, _ in first.items] == [0]  # the follower waits for the prompt's pages
    assert follower.status == ReqStatus.WAITING and leader.status == ReqStatus.DECODING
    second = s.step()
    assert 1 in [uid for uid, _, _ in second.items]
