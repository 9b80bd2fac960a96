"""Speculative decoding in the scheduler: the same tokens as without speculation, pages back on the
free list after every step, finishing cut exactly where one token at a time would have stopped.

The tiny random model drives most tests (drafts come from prompts that repeat a phrase); the
`slow` ones load the real default model in float32, whose drafts are accepted when it copies
text, and one runs the real server. Run them with `pytest -q tests/test_speculative.py`. The
rules underneath (the n-gram drafts, the acceptance rule and its distribution) are tested alone
in tests/test_speculative_rules.py.
"""

from __future__ import annotations

import random

import pytest

from minisgl_edu.core import SamplingParams
from minisgl_edu.kvcache import pages_for
from minisgl_edu.scheduler import Scheduler, SchedulerConfig
from minisgl_edu.scheduler.ngram import backoff


# ---------------------------------------------------------------- the scheduler, tiny model
def make(tiny_model_dir, spec: bool, **kw) -> Scheduler:
    cfg = dict(model=tiny_model_dir, device="cpu", page_size=4, num_pages=512, max_prefill_tokens=256)
    if spec:
        cfg.update(speculative_algorithm="ngram", speculative_num_draft_tokens=4)
    cfg.update(kw)
    return Scheduler(SchedulerConfig(**cfg))


def repetitive(n: int, seed: int) -> list[int]:
    """A prompt that repeats a short phrase, so drafts are found from the first decode step."""
    rng = random.Random(seed)
    phrase = [rng.randrange(100, 40000) for _ in range(rng.randrange(3, 8))]
    return (phrase * (n // len(phrase) + 1))[:n]


def run(s: Scheduler, prompts, params, overlap=False, check_each_step=True):
    for uid, (p, sp) in enumerate(zip(prompts, params)):
        s.add_request(uid, p, sp)
    records = []
    while True:
        rec = s.overlap_step() if overlap else s.step()
        if rec is None and s.is_idle and not s.has_in_flight:
            break
        if rec is not None:
            records.append(rec)
        if check_each_step:
            s.cache.check()
            # After a verify: no page beyond what the request's tokens need (with overlap_step
            # the next batch is already scheduled, with pages reserved for its drafts).
            for req in s.running if not overlap else []:
                if rec is not None and req.uid in rec.accepted:
                    held, ps = s.cache.held_pages(req), s.cache.page_size
                    # (the newest token's slot may not be reserved yet: when every draft was accepted)
                    assert pages_for(req.total_len - 1, ps) <= held <= pages_for(req.total_len, ps)
    out, reasons = {}, {}
    for m in s.io.drain():
        out.setdefault(m.uid, [])
        if m.next_token >= 0:
            out[m.uid].append(m.next_token)
        if m.finished:
            reasons[m.uid] = m.finish_reason
    s.cache.check()
    assert s.cache.num_available == s.cache.num_pages  # every page free or evictable
    return out, reasons, records


PROMPTS = [repetitive(n, seed) for seed, n in enumerate([9, 23, 40, 64, 5, 31])]
GREEDY = SamplingParams(max_tokens=24, ignore_eos=True)


def test_a_request_whose_drafts_fail_pauses_drafting(tiny_model_dir, reference, monkeypatch):
    """Drafts that are always wrong: after the m-th verify in a row that accepted nothing the
    request proposes none for `backoff(m)` = 1, 2, 4, ... steps; the tokens stay the reference's."""
    import minisgl_edu.scheduler.speculator as speculator_module

    prompt, ref = PROMPTS[0], reference[0]

    def wrong(tokens, k, n_max, n_min):
        return [ref[len(tokens) - len(prompt)] + 1]  # never the model's next token

    monkeypatch.setattr(speculator_module, "propose_ngram", wrong)
    out, _, records = run(make(tiny_model_dir, spec=True), [prompt], [GREEDY])
    assert out[0] == ref
    drafted = [0 in rec.drafts for rec in records if 0 in rec.next_tokens][1:]  # decode steps
    assert not any(rec.accepted.get(0) for rec in records)
    # verify, 1 pause, verify, 2 pauses, verify, 4 pauses, verify, 8 pauses, verify, ...
    expected = []
    misses = 0
    while len(expected) < len(drafted):
        misses += 1
        expected += [True] + [False] * backoff(misses)
    assert drafted == expected[: len(drafted)]


@pytest.fixture(scope="module")
def reference(tiny_model_dir):
    return run(make(tiny_model_dir, spec=False), PROMPTS, [GREEDY] * len(PROMPTS))[0]


@pytest.mark.parametrize("page_size", [1, 4, 16])
def test_greedy_tokens_equal_without_speculation(tiny_model_dir, reference, page_size):
    s = make(tiny_model_dir, spec=True, page_size=page_size, num_pages=2048 // page_size)
    out, reasons, records = run(s, PROMPTS, [GREEDY] * len(PROMPTS))
    assert out == reference
    assert all(r == "length" for r in reasons.values())
    assert any(rec.phase == "verify" for rec in records)
    assert s.speculator.accepted_tokens_total > 0  # the drafts did pay: fewer steps than tokens
    outcomes = s.speculator.verify_outcomes  # [drafts][accepted]
    assert sum(a * n for row in outcomes for a, n in enumerate(row)) == s.speculator.accepted_tokens_total
    assert sum(d * n for d, row in enumerate(outcomes) for n in row) == s.speculator.draft_tokens_total
    assert len(records) < sum(len(v) for v in reference.values())


def test_batch_one_at_a_time_equals_reference(tiny_model_dir, reference):
    for uid, p in enumerate(PROMPTS):
        out, _, _ = run(make(tiny_model_dir, spec=True), [p], [GREEDY])
        assert out[0] == reference[uid]


@pytest.mark.parametrize("overlap", [False, True], ids=["normal", "overlap"])
def test_requests_that_do_not_speculate_share_the_batch(tiny_model_dir, overlap):
    """A request with penalties never carries drafts; it runs in verify batches beside others,
    and its token from a verify batch is the input of its next decode step in either loop."""
    pen = SamplingParams(max_tokens=24, ignore_eos=True, presence_penalty=0.5)
    params = [GREEDY, pen, GREEDY, pen, GREEDY, GREEDY]
    want, _, _ = run(make(tiny_model_dir, spec=False), PROMPTS, params)
    s = make(tiny_model_dir, spec=True)
    got, _, records = run(s, PROMPTS, params, overlap=overlap)
    assert got == want
    assert not any(uid in (1, 3) for rec in records for uid in rec.drafts)


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("mixed", [False, True])
def test_loops_and_mixed_batches_give_the_same_tokens(tiny_model_dir, reference, overlap, mixed):
    s = make(tiny_model_dir, spec=True, mixed_chunk=mixed, max_prefill_tokens=48)
    out, _, _ = run(s, PROMPTS, [GREEDY] * len(PROMPTS), overlap=overlap)
    assert out == reference


@pytest.mark.parametrize("guesses", [True, False])
def test_overlap_loop_verifies_alone_and_overlaps_when_nothing_is_guessed(
    tiny_model_dir, reference, guesses, monkeypatch
):
    """Under the overlap loop a verify batch is never launched while another batch runs (its input
    tokens come from the host); when no request finds drafts, batches overlap as without
    speculation. The tokens are the reference's either way."""
    import minisgl_edu.scheduler.speculator as speculator_module

    if not guesses:
        monkeypatch.setattr(speculator_module, "propose_ngram", lambda *a: [])
    s = make(tiny_model_dir, spec=True)
    launches = []  # (another batch in flight?, this one verifies drafts?)
    launch = s.launch

    def logged(batch):
        launches.append((s.has_in_flight, batch.has_drafts))
        return launch(batch)

    s.launch = logged
    out, _, _ = run(s, PROMPTS, [GREEDY] * len(PROMPTS), overlap=True)
    assert out == reference
    assert (True, True) not in launches
    if guesses:
        assert (False, True) in launches
    else:
        assert sum(in_flight for in_flight, _ in launches) > len(launches) // 2


@pytest.mark.parametrize("overlap", [False, True])
def test_one_ngram_lookup_per_request_and_token_count(tiny_model_dir, reference, overlap, monkeypatch):
    """The overlap loop asks whether a request finds drafts (`must_land_first`) and then asks for
    them (`drafts`), often on the same tokens: the search runs once for them."""
    import minisgl_edu.scheduler.speculator as speculator_module

    lookups = []
    propose = speculator_module.propose_ngram

    def counted(tokens, *args):
        lookups.append(tuple(tokens))
        return propose(tokens, *args)

    monkeypatch.setattr(speculator_module, "propose_ngram", counted)
    out, _, _ = run(make(tiny_model_dir, spec=True), PROMPTS, [GREEDY] * len(PROMPTS), overlap=overlap)
    assert out == reference
    assert lookups and len(lookups) == len(set(lookups))


def test_max_tokens_is_never_overshot(tiny_model_dir, reference):
    """Drafts are capped so the drafts and the bonus token fit in max_tokens."""
    for m in (1, 2, 3, 5, 7):
        sp = SamplingParams(max_tokens=m, ignore_eos=True)
        out, reasons, _ = run(make(tiny_model_dir, spec=True), PROMPTS, [sp] * len(PROMPTS))
        assert out == {u: t[:m] for u, t in reference.items()}
        assert set(reasons.values()) == {"length"}


def test_prefix_cache_holds_only_verified_tokens(tiny_model_dir, reference):
    """After a speculative run, every cached token sequence is a prefix of a prompt + its real
    output (never a rejected draft): a second run that hits the cache gives the same tokens."""
    s = make(tiny_model_dir, spec=True, page_size=1, num_pages=2048)
    run(s, PROMPTS, [GREEDY] * len(PROMPTS))
    full = [p + reference[u] for u, p in enumerate(PROMPTS)]
    for uid, seq in enumerate(full):
        _, pages = s.cache.prefix_cache.match_prefix(seq)
        assert len(pages) >= len(PROMPTS[uid]) + len(reference[uid]) - 2  # the last output is never computed
    tree = s.cache.prefix_cache
    for key in tree.sequences():
        assert any(tuple(seq[: len(key)]) == key for seq in full), key
    # Reuse: the same prompts again, now served from the cache.
    again, _, _ = run(s, PROMPTS, [GREEDY] * len(PROMPTS))
    assert again == reference


@pytest.mark.parametrize("overlap", [False, True])
def test_abort_at_any_step_returns_every_page(tiny_model_dir, overlap):
    """A fuzz of abort timings with speculation on: after each abort and at the end, every page
    is free or cached, and the other requests still give their reference tokens."""
    rng = random.Random(0)
    base, _, _ = run(make(tiny_model_dir, spec=True), PROMPTS, [GREEDY] * len(PROMPTS))
    for trial in range(12):
        s = make(tiny_model_dir, spec=True)
        for uid, p in enumerate(PROMPTS):
            s.add_request(uid, p, GREEDY)
        victims = rng.sample(range(len(PROMPTS)), 2)
        when = {v: rng.randrange(0, 12) for v in victims}
        step = 0
        while True:
            for v, at in when.items():
                if at == step:
                    s.abort(v)  # possibly with a verify batch in flight (overlap)
            rec = s.overlap_step() if overlap else s.step()
            step += 1
            s.cache.check()
            if rec is None and s.is_idle and not s.has_in_flight:
                break
        got: dict[int, list[int]] = {}
        for m in s.io.drain():
            got.setdefault(m.uid, [])
            if m.next_token >= 0:
                got[m.uid].append(m.next_token)
        for uid in range(len(PROMPTS)):
            if uid not in victims:
                assert got[uid] == base[uid], (trial, uid)
            else:
                assert got[uid] == base[uid][: len(got[uid])]
        assert s.cache.num_available == s.cache.num_pages
        assert s.cache.page_table.num_free_rows == s.cache.page_table.max_reqs


def test_seeded_sampling_is_reproducible(tiny_model_dir):
    # 12 tokens: each sampled row draws from the whole 49152-token vocabulary, the cost of this test
    sp = SamplingParams(max_tokens=12, ignore_eos=True, temperature=0.8, seed=11)
    a, _, _ = run(make(tiny_model_dir, spec=True), PROMPTS, [sp] * len(PROMPTS))
    b, _, _ = run(make(tiny_model_dir, spec=True), PROMPTS[:1], [sp])
    assert a[0] == b[0]
    assert a == run(make(tiny_model_dir, spec=True), PROMPTS, [sp] * len(PROMPTS))[0]


def test_logprobs_of_accepted_tokens_equal_those_without_speculation(tiny_model_dir):
    sp = SamplingParams(max_tokens=16, ignore_eos=True, logprobs=True, top_logprobs=3)

    def logprobs(spec):
        s = make(tiny_model_dir, spec=spec)
        for uid, p in enumerate(PROMPTS):
            s.add_request(uid, p, sp)
        s.run_until_idle()
        out = {}
        for m in s.io.drain():
            if m.next_token >= 0:
                out.setdefault(m.uid, []).append((m.next_token, m.logprob, [t for t, _ in m.top_logprobs]))
        return out, s

    off, _ = logprobs(False)
    on, s = logprobs(True)
    assert s.speculator.accepted_tokens_total > 0
    for uid in off:
        assert [t for t, _, _ in on[uid]] == [t for t, _, _ in off[uid]]
        assert [top for _, _, top in on[uid]] == [top for _, _, top in off[uid]]
        for (_, a, _), (_, b, _) in zip(on[uid], off[uid]):
            assert a == pytest.approx(b, abs=1e-4)


def test_grammar_requests_do_not_speculate(tiny_model_dir):
    sp = SamplingParams(max_tokens=12, regex="(ab)+")
    s = make(tiny_model_dir, spec=True)
    _, reasons, records = run(s, PROMPTS[:2], [sp, GREEDY])
    assert not any(0 in rec.drafts for rec in records)


def test_config_rejects_unknown_algorithm():
    with pytest.raises(ValueError, match="speculative_algorithm"):
        SchedulerConfig(speculative_algorithm="eagle")
    with pytest.raises(ValueError):
        SchedulerConfig(speculative_algorithm="ngram", speculative_ngram_min=3, speculative_ngram_max=2)


# ---------------------------------------------------------------- the real model, float32
# Random weights rarely repeat themselves, so drafts are seldom accepted; these checks need a model
# that copies text. Each costs a forward pass per step of the real model in float32, which on a
# 2-core machine that other work keeps busy takes a second or more: so two prompts that copy text
# (their drafts are accepted from the first lines on) and one that does not, 16 tokens each, one
# engine for the module, and every run made once and shared by the checks that read it.
REPEAT_CHATS = [
    "Copy this list, one item per line: apples, bananas, cherries, dates, figs, grapes.",
    "Repeat this sentence exactly: The quick brown fox jumps over the lazy dog near the river bank.",
    "What is KV Cache?",  # no repeated n-gram early on: it shares the batch without drafts
]
REAL_TOKENS = 16
COPYING = 2  # the first two prompts speculate
REAL = SamplingParams(max_tokens=REAL_TOKENS, ignore_eos=True)


@pytest.fixture(scope="module")
def real(default_model_dir):
    """The real model in float32 (the engine's exact path), its prompts, and each one's greedy
    output without speculation, computed one request at a time."""
    from minisgl_edu.engine import Engine

    # 128 pages of 16 tokens hold the three requests many times over (a larger pool is only memory to clear)
    cfg = SchedulerConfig(model=default_model_dir, device="cpu", cpu_weights="float32", num_pages=128, page_size=16)
    engine = Engine(cfg)
    tok = Scheduler(cfg, engine=engine).tokenizer
    texts = [
        tok.apply_chat_template([{"role": "user", "content": c}], tokenize=False, add_generation_prompt=True)
        for c in REPEAT_CHATS
    ]
    prompts = [tok.encode(t, add_special_tokens=False) for t in texts]
    ref = {}
    for uid, p in enumerate(prompts):
        ref[uid] = run(Scheduler(cfg, engine=engine, tokenizer=tok), [p], [REAL])[0][0]
    return engine, tok, cfg, prompts, ref


def _spec_scheduler(real, **kw) -> Scheduler:
    engine, tok, cfg, _, _ = real
    spec = SchedulerConfig(**{**cfg.__dict__, "speculative_algorithm": "ngram", **kw})
    return Scheduler(spec, engine=engine, tokenizer=tok)


@pytest.fixture(scope="module")
def spec_alone(real):
    """Each copying prompt with speculation, one request at a time: uid -> (tokens, step records,
    accepted drafts). (Alone, a request that never drafts is a plain decode; the batched test has one.)"""
    _, _, _, prompts, _ = real
    runs = {}
    for uid, p in enumerate(prompts[:COPYING]):
        s = _spec_scheduler(real)
        out, _, records = run(s, [p], [REAL])
        runs[uid] = (out[0], records, s.speculator.accepted_tokens_total)
    return runs


@pytest.mark.slow
def test_real_model_same_tokens_batched(real):
    """All three in one batch: verify batches that mix requests with drafts of different lengths
    and a request without any, each request's rows read back by the right one."""
    _, _, _, prompts, ref = real
    out, _, records = run(_spec_scheduler(real), prompts, [REAL] * len(prompts))
    assert out == ref
    assert any(rec.phase == "verify" and len(rec.next_tokens) > 1 for rec in records)


@pytest.mark.slow
def test_real_model_same_tokens_one_at_a_time(real, spec_alone):
    _, _, _, _, ref = real
    for uid in range(COPYING):
        assert spec_alone[uid][0] == ref[uid], REPEAT_CHATS[uid]
    # the copying prompts did speculate: more than a tenth of their tokens were accepted drafts
    assert sum(a for _, _, a in spec_alone.values()) > COPYING * REAL_TOKENS // 10


def _inside_a_run(real, spec_alone) -> tuple[int, int]:
    """(uid, token) where `token` first appears in uid's output as an accepted draft that another
    accepted token follows in the same verify: a finish on it must cut the run in its middle."""
    _, _, _, _, ref = real
    for uid, (_, records, _) in spec_alone.items():
        produced = 0  # the request's tokens before this step's (run() gives the lone request uid 0)
        for rec in records:
            acc = rec.accepted.get(0, [])
            for j, t in enumerate(acc):  # the model's own token of the step follows the last one
                if t not in ref[uid][: produced + j]:
                    return uid, t
            if 0 in rec.next_tokens:
                produced += len(acc) + 1
    raise AssertionError("no accepted draft is a token's first occurrence")


@pytest.mark.slow
def test_real_model_eos_inside_an_accepted_run_cuts_it(real, spec_alone):
    engine, tok, cfg, prompts, ref = real
    uid, eos = _inside_a_run(real, spec_alone)
    sp = SamplingParams(max_tokens=REAL_TOKENS)
    outs = []
    for spec in (False, True):
        s = _spec_scheduler(real) if spec else Scheduler(cfg, engine=engine, tokenizer=tok)
        s.eos_ids = {eos}
        outs.append(run(s, [prompts[uid]], [sp])[:2])
    assert outs[0] == outs[1]
    out, reasons = outs[1]
    assert out[0][-1] == eos and reasons[0] == "stop" and len(out[0]) < len(ref[uid])


@pytest.mark.slow
def test_real_model_stop_string_across_accepted_tokens(real, spec_alone):
    engine, tok, cfg, prompts, ref = real
    uid, token = _inside_a_run(real, spec_alone)
    at = ref[uid].index(token)
    stop = tok.decode(ref[uid][at : at + 2])  # spans the accepted draft and the token after it
    sp = SamplingParams(max_tokens=REAL_TOKENS, ignore_eos=True, stop=[stop])
    off = run(Scheduler(cfg, engine=engine, tokenizer=tok), [prompts[uid]], [sp])[:2]
    on = run(_spec_scheduler(real), [prompts[uid]], [sp])[:2]
    assert on == off and on[1][0] == "stop"


def test_server_flags_reach_the_scheduler_config():
    from minisgl_edu.server.args import parse_args

    a = parse_args(["--speculative-algorithm", "ngram", "--speculative-num-draft-tokens", "6"])
    over = a.scheduler_overrides()
    assert over["speculative_algorithm"] == "ngram" and over["speculative_num_draft_tokens"] == 6
    cfg = SchedulerConfig(**over)
    assert (cfg.speculative_ngram_max, cfg.speculative_ngram_min) == (4, 2)
    assert "speculative_algorithm" not in parse_args([]).scheduler_overrides()  # off by default
    assert "speculative_num_draft_tokens" not in parse_args([]).scheduler_overrides()  # the device's


def test_drafts_per_step_default_by_device(tiny_model_dir):
    """k is 4 on CPU unless set; the CUDA default (7) is `test_gpu.py`'s to see."""
    s = make(tiny_model_dir, spec=True, speculative_num_draft_tokens=None)
    assert s.speculator.num_draft_tokens == 4 and len(s.speculator.verify_outcomes) == 5
    s.add_request(0, repetitive(40, seed=3), SamplingParams(max_tokens=30, ignore_eos=True))
    records = s.run_until_idle()
    assert max(len(d) for r in records for d in r.drafts.values()) == 4
    assert make(tiny_model_dir, spec=True, speculative_num_draft_tokens=6).speculator.num_draft_tokens == 6


# ---------------------------------------------------------------- the real server
@pytest.mark.slow
def test_server_streams_the_same_answer_and_reports_the_drafts(tmp_path):
    """Over HTTP with --speculative-algorithm ngram: the same greedy answer as without it, the
    exact SSE framing and usage when a step brings several tokens, and the acceptance on
    /metrics (histograms) and /dashboard/state."""
    import json

    import httpx
    from live_server import ServerProcess, metrics, parse_sse, wait_metrics

    body = {
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": REPEAT_CHATS[0]}],
        "max_tokens": REAL_TOKENS,
        "temperature": 0,
    }

    def ask(server, stream: bool):
        r = httpx.post(server.url + "/v1/chat/completions", json={**body, "stream": stream}, timeout=120)
        assert r.status_code == 200
        if not stream:
            out = r.json()
            return out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"]
        chunks = [json.loads(p) for p in parse_sse(r.text) if p != "[DONE]"]
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        usage = [c["usage"] for c in chunks if c.get("usage")]
        return text, usage[-1]["completion_tokens"] if usage else None

    answers = {}
    for spec in (False, True):
        server = ServerProcess(tmp_path, *(["--speculative-algorithm", "ngram"] if spec else []))
        try:
            server.wait_ready()
            answers[spec] = ask(server, stream=False)
            if spec:
                body["stream_options"] = {"include_usage": True}
                assert ask(server, stream=True) == answers[spec]
                m = wait_metrics(server, lambda m: m.get("minisgl_spec_accepted_drafts_per_verify_count", 0) > 0, "")
                assert m["minisgl_spec_accepted_tokens_total"] > 0  # the prompt is made to be repeated
                assert m["minisgl_spec_accepted_drafts_per_verify_sum"] == m["minisgl_spec_accepted_tokens_total"]
                assert m["minisgl_spec_acceptance_rate_count"] == m["minisgl_spec_accepted_drafts_per_verify_count"]
                state = httpx.get(server.url + "/dashboard/state", timeout=5).json()
                assert sum(map(sum, state["scheduler"]["spec_verify_outcomes"])) > 0
            else:
                assert not any("spec" in k for k in metrics(server))
        finally:
            server.stop()
    assert answers[True] == answers[False]
