"""The scheduler on a tiny random model: batching, chunked prefill, finish, abort, prefix cache.

Every test checks behaviour: token ids equal to a reference run, pages back on the free list.
"""

from __future__ import annotations

import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.scheduler import Scheduler, SchedulerConfig


def make(tiny_model_dir, **kw) -> Scheduler:
    cfg = dict(model=tiny_model_dir, device="cpu", page_size=4, num_pages=256, max_prefill_tokens=256)
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg))


def prompt(n: int, seed: int = 0) -> list[int]:
    return [(seed * 7919 + i * 104729) % 49000 + 100 for i in range(n)]


def run_all(s: Scheduler, prompts, params) -> dict[int, list[int]]:
    for uid, (p, sp) in enumerate(zip(prompts, params)):
        s.add_request(uid, p, sp)
    s.run_until_idle()
    out: dict[int, list[int]] = {}
    for m in s.io.drain():
        out.setdefault(m.uid, [])
        if m.next_token >= 0:
            out[m.uid].append(m.next_token)
    return out


GREEDY = SamplingParams(max_tokens=12, ignore_eos=True)


@pytest.fixture(scope="module")
def reference(tiny_model_dir):
    """Each prompt run alone, unchunked: what every other configuration must reproduce."""
    prompts = [prompt(n, seed) for seed, n in enumerate([5, 37, 64, 3])]
    ref = {}
    for i, p in enumerate(prompts):
        s = make(tiny_model_dir, cache="naive")
        ref[i] = run_all(s, [p], [GREEDY])[0]
    return prompts, ref


@pytest.mark.parametrize("page_size", [1, 16])
@pytest.mark.parametrize("cache", ["radix", "naive"])
def test_batched_equals_alone(tiny_model_dir, reference, page_size, cache):
    prompts, ref = reference
    s = make(tiny_model_dir, page_size=page_size, cache=cache, num_pages=4096 // page_size)
    out = run_all(s, prompts, [GREEDY] * len(prompts))
    assert out == ref
    assert s.stats().kv_pages_free == s.cache.num_pages  # cached pages count as free
    s.cache.check()


def test_default_prefill_budget_on_cpu_is_2048_tokens(tiny_model_dir):
    """SchedulerConfig's budget None means 2048 tokens on CPU (8192 on CUDA): a 2100-token prompt
    is prefilled in a 2048-token chunk, then the 52 left."""
    s = make(tiny_model_dir, max_prefill_tokens=None, num_pages=1024)
    assert s.max_prefill_tokens == 2048
    s.add_request(0, prompt(2100), SamplingParams(max_tokens=1, ignore_eos=True))
    prefill = [r for r in s.run_until_idle() if r.phase == "prefill"]
    assert [r.items[0][1:] for r in prefill] == [(0, 2048), (2048, 52)]


def test_chunked_prefill_same_tokens(tiny_model_dir, reference):
    prompts, ref = reference
    s = make(tiny_model_dir, max_prefill_tokens=16)
    s.add_request(0, prompts[2], GREEDY)  # 64 tokens -> chunks of 16
    records = s.run_until_idle()
    prefill = [r for r in records if r.phase == "prefill"]
    assert [r.items[0][1:] for r in prefill] == [(0, 16), (16, 16), (32, 16), (48, 16)]
    tokens = [m.next_token for m in s.io.drain()]
    assert tokens == ref[2]


def test_new_requests_join_while_others_decode(tiny_model_dir, reference):
    prompts, ref = reference
    s = make(tiny_model_dir)
    s.add_request(0, prompts[0], GREEDY)
    s.step()
    s.step()  # uid 0 is decoding now
    s.add_request(1, prompts[1], GREEDY)
    rec = s.step()
    assert rec.phase == "prefill" and [u for u, _, _ in rec.items] == [1]
    rec = s.step()
    assert rec.phase == "decode" and sorted(u for u, _, _ in rec.items) == [0, 1]
    s.run_until_idle()
    out: dict[int, list[int]] = {}
    for m in s.io.drain():
        out.setdefault(m.uid, []).append(m.next_token)
    assert out == {0: ref[0], 1: ref[1]}


def test_max_tokens_gives_length(tiny_model_dir):
    s = make(tiny_model_dir)
    s.add_request(0, prompt(8), SamplingParams(max_tokens=5, ignore_eos=True))
    s.run_until_idle()
    msgs = s.io.drain()
    assert len(msgs) == 5 and msgs[-1].finished and msgs[-1].finish_reason == "length"
    assert not any(m.finished for m in msgs[:-1])


def test_eos_stops_unless_ignored(tiny_model_dir, reference):
    prompts, ref = reference
    eos = ref[1][4]  # pretend the 5th greedy token is an end-of-sequence id
    first = ref[1].index(eos)
    s = make(tiny_model_dir)
    s.eos_ids = {eos}
    s.add_request(0, prompts[1], GREEDY)  # ignore_eos=True
    s.add_request(1, prompts[1], SamplingParams(max_tokens=12))
    s.run_until_idle()
    out: dict[int, list] = {}
    for m in s.io.drain():
        out.setdefault(m.uid, []).append((m.next_token, m.finish_reason))
    assert [t for t, _ in out[0]] == ref[1] and out[0][-1][1] == "length"
    assert [t for t, _ in out[1]] == ref[1][: first + 1] and out[1][-1][1] == "stop"


def test_stop_string_finishes(tiny_model_dir, reference):
    prompts, ref = reference
    s = make(tiny_model_dir)
    text = s.tokenizer.decode(ref[3], skip_special_tokens=True)
    stop = text[len(text) // 2 : len(text) // 2 + 3]
    assert stop.strip(), "the reference text should have something to stop on"
    s.add_request(0, prompts[3], SamplingParams(max_tokens=12, stop=[stop]))
    s.run_until_idle()
    msgs = s.io.drain()
    assert msgs[-1].finish_reason == "stop" and len(msgs) < 12
    assert stop in s.tokenizer.decode([m.next_token for m in msgs], skip_special_tokens=True)


def _free(s: Scheduler) -> int:
    return s.cache.num_free


@pytest.mark.parametrize("where", ["waiting", "mid_chunk", "decoding"])
def test_abort_frees_everything(tiny_model_dir, where):
    s = make(tiny_model_dir, max_prefill_tokens=16, cache="radix")
    start = _free(s)
    rows = s.cache.page_table.num_free_rows
    s.add_request(0, prompt(40), GREEDY)
    if where == "mid_chunk":
        s.step()
        assert s.reqs[0].cached_len == 16 and s.cache.held_pages(s.reqs[0]) > 0
    elif where == "decoding":
        for _ in range(4):
            s.step()
        assert s.reqs[0].output_ids
    assert s.abort(0)
    assert _free(s) == start and s.cache.page_table.num_free_rows == rows
    assert s.is_idle and 0 not in s.reqs
    last = s.io.drain()[-1]
    assert last.uid == 0 and last.finished and last.finish_reason == "abort"
    s.cache.check()
    assert not s.abort(0)  # a second abort is a no-op


def test_prompt_that_can_never_fit_is_rejected(tiny_model_dir):
    s = make(tiny_model_dir, num_pages=8)  # 32 tokens of cache
    s.add_request(0, prompt(40), GREEDY)
    s.add_request(1, [49152 + 5], GREEDY)
    msgs = s.io.drain()
    assert [(m.uid, m.finished, m.finish_reason) for m in msgs] == [(0, True, "abort"), (1, True, "abort")]
    assert "prompt has 40 tokens" in msgs[0].error and "outside the vocabulary" in msgs[1].error
    assert s.is_idle


def test_requests_wait_for_pages_then_run(tiny_model_dir, reference):
    prompts, ref = reference
    # 24 pages of 4 tokens: room for one 64+12 token request at a time.
    s = make(tiny_model_dir, num_pages=24, cache="naive")
    out = run_all(s, [prompts[2], prompts[2]], [GREEDY, GREEDY])
    assert out == {0: ref[2], 1: ref[2]}
    assert _free(s) == 24


def test_radix_reuses_shared_prefix(tiny_model_dir):
    shared = prompt(200, seed=9)
    a, b = shared + prompt(7, seed=1), shared + prompt(9, seed=2)
    outs = {}
    for cache in ["naive", "radix"]:
        s = make(tiny_model_dir, page_size=16, num_pages=64, cache=cache)
        first = run_all(s, [a], [GREEDY])[0]
        s.add_request(1, b, GREEDY)
        rec = s.step()
        computed = rec.items[0]
        s.run_until_idle()
        second = [m.next_token for m in s.io.drain()]
        outs[cache] = (first, second)
        if cache == "radix":
            assert computed[1:] == (192, len(b) - 192)  # only tokens after 12 full shared pages
        else:
            assert computed[1:] == (0, len(b))
    assert outs["naive"] == outs["radix"]
