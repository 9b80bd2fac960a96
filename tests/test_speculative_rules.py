"""Speculative decoding's rules, without a model: the n-gram drafts, the pause after failed drafts,
and the acceptance rule that turns drafts into tokens.

Plain functions on token lists and probability tables (`scheduler/ngram.py`, `engine/verify.py`),
so these tests are fast and run anywhere: `pytest -q tests/test_speculative_rules.py`. Greedy
acceptance must keep exactly the tokens the model would have picked; sampled acceptance must leave
every emitted token with the target distribution, whatever the draft, which is checked
statistically with a stated tolerance. The scheduler that uses them is in tests/test_speculative.py.
"""

from __future__ import annotations

import random

import pytest
import torch

from minisgl_edu.core import SamplingParams
from minisgl_edu.engine.logits_chain import process_logits
from minisgl_edu.engine.verify import accept_greedy, accept_sampled, verify
from minisgl_edu.scheduler.ngram import MAX_PAUSE, backoff, propose_ngram


# ---------------------------------------------------------------- drafts
def test_ngram_proposes_what_followed_the_most_recent_match():
    tokens = [1, 2, 3, 9, 1, 2, 3, 7, 8, 5, 1, 2, 3]
    # "1 2 3" occurred at 4 (followed by 7 8 5 ...) and at 0 (followed by 9): the most recent wins.
    assert propose_ngram(tokens, 3, n_max=3, n_min=1) == [7, 8, 5]
    assert propose_ngram(tokens, 1, n_max=3, n_min=1) == [7]


def test_ngram_prefers_the_longest_match():
    # "5 6" last seen at 6 (-> 0), but "4 5 6" only at 0 (-> 1 2): the longer suffix decides.
    tokens = [4, 5, 6, 1, 2, 3, 5, 6, 0, 9, 4, 5, 6]
    assert propose_ngram(tokens, 2, n_max=3, n_min=2) == [1, 2]
    assert propose_ngram(tokens, 2, n_max=2, n_min=2) == [0, 9]


def test_ngram_gives_nothing_without_a_match():
    assert propose_ngram([1, 2, 3, 4, 5], 4, n_max=3, n_min=2) == []
    assert propose_ngram([1, 2, 3, 4, 5], 0, n_max=3, n_min=1) == []
    assert propose_ngram([7], 4, n_max=3, n_min=1) == []
    # n_min=1 matches a single repeated token; n_min=2 does not.
    assert propose_ngram([3, 8, 5, 3], 2, n_max=3, n_min=1) == [8, 5]
    assert propose_ngram([3, 8, 5, 3], 2, n_max=3, n_min=2) == []


def test_ngram_draft_runs_on_through_a_repeating_tail():
    # A match just before the suffix: the text repeats with that period, and the draft goes on.
    assert propose_ngram([5, 5, 5, 5], 4, n_max=2, n_min=2) == [5, 5, 5, 5]
    assert propose_ngram([9, 1, 2, 1, 2], 5, n_max=2, n_min=2) == [1, 2, 1, 2, 1]
    assert propose_ngram([1, 2, 3, 7, 1, 2, 3], 6, n_max=3, n_min=3) == [7, 1, 2, 3, 7, 1]


def _plain_ngram(tokens, k, n_max, n_min):
    """The rule written as a loop: longest n first, then the most recent earlier match."""
    for n in range(min(n_max, len(tokens) - 1), n_min - 1, -1):
        for start in range(len(tokens) - n - 1, -1, -1):
            if tokens[start : start + n] == tokens[-n:]:
                seq = list(tokens)
                for i in range(k):
                    seq.append(seq[start + n + i])
                return seq[len(tokens) :]
    return []


def test_ngram_search_equals_the_plain_loop_on_random_text():
    # Small alphabets give many matches; ids in the surrogate range (55296-57343) included.
    rng = random.Random(0)
    for _ in range(2000):
        vocab = rng.choice([2, 3, 5, 60000])
        tokens = [rng.randrange(vocab) for _ in range(rng.randint(1, 50))]
        k, n_min = rng.randint(0, 6), rng.randint(1, 3)
        n_max = rng.randint(n_min, 5)
        assert propose_ngram(tokens, k, n_max, n_min) == _plain_ngram(tokens, k, n_max, n_min), tokens


def test_backoff_doubles_and_is_capped():
    assert [backoff(m) for m in range(7)] == [0, 1, 2, 4, 8, 16, 16] and MAX_PAUSE == 16


# ---------------------------------------------------------------- acceptance, greedy
def test_accept_greedy_takes_the_agreeing_prefix_and_the_model_token():
    assert accept_greedy([4, 5, 6], [4, 5, 6, 7]) == [4, 5, 6, 7]  # all accepted + the bonus
    assert accept_greedy([4, 5, 6], [4, 9, 6, 7]) == [4, 9]  # stops at the first mismatch
    assert accept_greedy([4, 5, 6], [8, 5, 6, 7]) == [8]  # none accepted: the model's token
    assert accept_greedy([], [3]) == [3]


# ---------------------------------------------------------------- acceptance, sampled
def _empirical(draws: list[int], vocab: int) -> torch.Tensor:
    return torch.bincount(torch.tensor(draws), minlength=vocab).double() / len(draws)


@pytest.mark.parametrize("draft", [1, 3])  # a likely draft and an impossible one
def test_accept_sampled_keeps_the_target_distribution(draft):
    """Every emitted position must have the target's distribution, whatever the draft.

    20,000 draws: each frequency's standard error is at most 0.0036, so a tolerance of 0.015 is
    over four of them (a correct rule fails it with probability below 1e-4 per token)."""
    p = torch.tensor([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]])
    gen = torch.Generator().manual_seed(1234)
    first, second = [], []
    for _ in range(20_000):
        out = accept_sampled([draft], p, gen)
        first.append(out[0])
        if len(out) == 2:
            second.append(out[1])
    assert torch.allclose(_empirical(first, 4), p[0].double(), atol=0.015)
    if draft == 1:  # accepted 30% of the time: the bonus token follows p[1]
        assert abs(len(second) / 20_000 - 0.3) < 0.015
        assert torch.allclose(_empirical(second, 4), p[1].double(), atol=0.03)
    else:  # p(3) = 0: never accepted, never emitted
        assert not second and 3 not in first


def test_verify_applies_temperature_and_top_k_before_the_rule():
    """The rule works on the sampler's distribution: top_k=2 keeps only tokens 0 and 1, so a
    draft of token 2 is always rejected and the emitted token follows softmax(l / T) over the two."""
    from minisgl_edu.core import Req

    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0], [0.0, 0.0, 0.0, 0.0]])
    sp = SamplingParams(temperature=0.5, top_k=2)
    req = Req(uid=0, input_ids=[1], sampling_params=sp, generator=torch.Generator().manual_seed(7))
    want = torch.softmax(torch.tensor([2.0, 1.0]) / 0.5, dim=0)
    draws = [verify(process_logits, logits, [req], [[2]])[0] for _ in range(10_000)]
    assert all(len(d) == 1 and d[0] in (0, 1) for d in draws)
    got = _empirical([d[0] for d in draws], 2)
    assert torch.allclose(got, want.double(), atol=0.02)
