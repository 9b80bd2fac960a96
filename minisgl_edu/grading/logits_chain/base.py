"""Exercise 7 — the logits chain: `process_logits(logits, reqs) -> logits` (score line "logits_chain").

The sampler calls it first (`Sampler.process_fn`), with one row of logits per request that samples
a token now, and draws from (or takes the argmax of) what it returns. The unit cases (batches made
by hand, chain.py) compare every row with the package's own `process_logits` and name the known
mistake a wrong row shows. The last cases plug the function into the real engine
(`engine.sampler.process_fn`) and compare greedy tokens, finish reasons and logprobs with the
package's chain. The stretch, min_p, is graded on its own score line (`min_p.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine import logits_chain as chain_module
from minisgl_edu.engine.grammar import grammar_mask
from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.harness import encode, new_scheduler, remember, tokenizer
from minisgl_edu.grading.logits_chain.bitmask_rows import call_or_name
from minisgl_edu.grading.logits_chain.carried_tokens import carried_tokens
from minisgl_edu.grading.logits_chain.chain import (
    BIAS_MISTAKES,
    MASK_MISTAKES,
    PENALTY_MISTAKES,
    WIDE,
    YES_NO,
    V,
    _call,
    _chain,
    _close,
    _close_all,
    _describe,
    _first_difference,
    _grammar,
    _params,
    _random,
    _req,
    _rows,
)
from minisgl_edu.grading.logits_chain.check import check_rows
from minisgl_edu.grading.logits_chain.in_place import case_not_in_place
from minisgl_edu.grading.logits_chain.mistakes import HINTS, MISTAKES, REPETITION
from minisgl_edu.grading.logits_chain.scenes import chain_case

# --- the cases ----------------------------------------------------------------------------------------


def case_plain(fn):
    logits = _random(3, 0)
    reqs = [
        _req((1, 2, 3), (4, 4)),
        _req((5,), (6, 7, 6), temperature=0.8, top_p=0.9),
        _req((1,), (), temperature=1.0, top_k=5, seed=3),
    ]
    check_rows(fn, logits, reqs, [])


def case_repetition(fn):
    # row 0: p = 2. Prompt only: tokens 1 (positive) and 3 (negative, twice); output only: 2
    # (positive) and 5 (positive, twice); both: 7 (negative). Row 1: p = 1.5 on the first token
    # (no output yet), row 2: p = 0.5 (< 1 makes seen tokens more likely).
    logits = _rows(
        [0.5, 2.0, 1.5, -1.0, 2.5, 3.0, 0.25, -0.5, 1.0, -2.0, 0.75, 0.1],
        [0.5, 2.0, 1.5, -1.0, 2.5, 3.0, 0.25, -0.5, 1.0, -2.0, 0.75, 0.1],
        [0.5, 2.0, 1.5, -1.0, 2.5, 3.0, 0.25, -0.5, 1.0, -2.0, 0.75, 0.1],
    )
    reqs = [
        _req((1, 3, 3, 7), (2, 5, 5, 7), repetition_penalty=2.0),
        _req((1, 3, 9), (), repetition_penalty=1.5),
        _req((8, 9), (1, 1), repetition_penalty=0.5),
    ]
    check_rows(fn, logits, reqs, PENALTY_MISTAKES)


def case_frequency_presence(fn):
    # Token 1 is only in the prompt, token 2 in both (once in the output), token 4 three times in
    # the output, token 6 once. Rows: frequency only, presence only, both (one negative), first token.
    logits = _random(4, 1)
    prompt, output = (1, 2, 3), (2, 4, 4, 4, 6)
    reqs = [
        _req(prompt, output, frequency_penalty=0.5),
        _req(prompt, output, presence_penalty=0.75),
        _req(prompt, output, frequency_penalty=0.4, presence_penalty=-0.3),
        _req(prompt, (), frequency_penalty=1.0, presence_penalty=1.0),
    ]
    check_rows(fn, logits, reqs, PENALTY_MISTAKES)
    # Output [6, 4, 4, 4]: first-occurrence order (6, 4) is not ascending, so each count must go with its
    # own token, not with the distinct tokens in another order (count_pairs.py)
    check_rows(fn, _random(1, 5), [_req(prompt, (6, 4, 4, 4), frequency_penalty=0.5)], PENALTY_MISTAKES)
    # The counts are those of req.output_ids as it is: the same batch again, or one request on two
    # rows (as a verify batch lists them), gives the same rows.
    want = package_chain(logits.clone(), reqs).float()
    for what, batch, rows in (
        ("the same batch again", reqs, list(range(4))),
        ("the batch [reqs[0], reqs[0]] (one request on two rows)", [reqs[0], reqs[0]], [0, 0]),
    ):
        got = _call(fn, logits[rows], batch)
        bad = [i for i, r in enumerate(rows) if not _close(got[i], want[r])]
        if bad:
            raise Mistake(
                f"called on {what}, row {bad[0]} (output {list(output)}) came out different: "
                f"{_first_difference(got[bad[0]], want[rows[bad[0]]], logits[rows[bad[0]]])}. Each call must "
                "count the output as req.output_ids is now; a count kept from an earlier call or row is counted again",
                "the counts come from req.output_ids at each call: keep no state on the request or between calls",
            )
    # A batch whose only link is the frequency penalty, then one whose only link is the presence penalty:
    # each penalty is a link of its own, whatever a "nothing to do" shortcut tests.
    for k in (0, 1):
        check_rows(fn, logits[k : k + 1], reqs[k : k + 1], PENALTY_MISTAKES)


def case_penalty_order(fn):
    # Token 5 (twice in the output) has a positive logit that the subtraction turns negative: scaling
    # before or after subtracting gives different numbers.
    logits = _rows(
        [0.5, 2.0, 1.5, -1.0, 2.5, 1.0, 0.25, -0.5, 1.0, -2.0, 0.75, 0.1],
        [0.5, 2.0, 1.5, -1.0, 2.5, 1.0, 0.25, -0.5, 1.0, -2.0, 0.75, 0.1],
    )
    reqs = [
        _req((1, 3), (5, 5, 7), repetition_penalty=1.5, frequency_penalty=0.5, presence_penalty=0.25),
        _req((2,), (3, 9, 9), repetition_penalty=1.25, presence_penalty=0.5),
    ]
    check_rows(fn, logits, reqs, PENALTY_MISTAKES)


def case_bias(fn):
    logits = _random(3, 2)
    reqs = [
        _req((1,), (2,), logit_bias={8: 2.5, 3: 5.0, 4: -100.0}),  # ids out of order: each amount on its own id
        _req((1,), (2,)),
        _req((1,), (2,), logit_bias={0: -3.0}, temperature=0.7),
    ]
    check_rows(fn, logits, reqs, BIAS_MISTAKES)


def case_bias_order(fn):
    logits = _random(2, 3).abs() + 0.5  # positive logits: divided by the repetition penalty
    reqs = [
        _req((1, 2), (3,), repetition_penalty=2.0, logit_bias={2: 3.0, 3: -1.0, 6: 1.0}),
        _req((4,), (5, 5), frequency_penalty=0.5, repetition_penalty=1.5, logit_bias={5: 2.0}),
    ]
    check_rows(fn, logits, reqs, BIAS_MISTAKES + PENALTY_MISTAKES)


def case_rows(fn):
    logits = _random(5, 4)
    reqs = [
        _req((1, 2), (3, 3)),
        _req((1, 2), (3, 3), repetition_penalty=1.3, frequency_penalty=0.6),
        _req((4, 5), (6,), temperature=1.0, top_p=0.9),
        _req((7,), (8, 8), logit_bias={9: 4.0}, presence_penalty=0.2),
        _req((1, 2), (3, 3), temperature=0.5),
    ]
    check_rows(fn, logits, reqs, PENALTY_MISTAKES + BIAS_MISTAKES)


GRAMMAR_SHORTCUT = "a batch where grammars are the only link still needs the chain: count req.grammar in the shortcut"


def _check_grammars_only(fn, logits: torch.Tensor, reqs: list[Req]) -> None:
    """check_rows on a batch whose only links are grammars. When it comes back as the model gave it but the
    grammar rows are masked right once a row with a logit_bias joins the batch, the answer's "nothing
    to do" shortcut forgot the grammars: that is said."""
    if _close_all(call_or_name(fn, logits, reqs), logits.float()):
        try:
            again = _call(fn, torch.cat([logits, logits[:1]]), [*reqs, _req(logit_bias={1: 1.0})])
        except Exception:
            again = None  # (check_rows below says what is wrong)
        want = package_chain(logits.clone(), reqs).float()
        if again is not None and _close_all(again[: len(reqs)], want):
            rows = [i for i, r in enumerate(reqs) if r.grammar is not None]
            raise Mistake(
                f"the whole batch came back as the model gave it, yet rows {rows} have a grammar (row {rows[0]}: "
                f"{_describe(reqs[rows[0]])}) and every token a grammar forbids must come out as -inf. With "
                "a row that has a logit_bias added to the batch your function masks them right, so the shortcut "
                "that returns the logits untouched when no penalty or bias is set forgot the grammars: a row with "
                "a grammar needs the chain, whatever else it asks for",
                GRAMMAR_SHORTCUT,
            )
    check_rows(fn, logits, reqs, MASK_MISTAKES)


def case_grammar(fn):
    # 'a' (token 1) has the largest logit everywhere; the grammar (yes|no) forbids it.
    row = [0.0, 5.0, 1.0, 0.5, 2.0, 1.5, 0.3, 0.2, 0.4, 0.1, 3.0, -1.0]
    logits = _rows(row, row, row, row)
    reqs = [
        _req((2,), (), grammar=_grammar()),  # greedy, at the start: 'yes', 'no', 'y' or 'n'
        _req((2,), (6,), grammar=_grammar(accepted=(6,)), temperature=0.7),  # after 'y': only 'es'
        _req((2,), (4,), grammar=_grammar(accepted=(4,))),  # greedy, after 'yes': only <eos>
        _req((2,), ()),  # greedy, no grammar
    ]
    _check_grammars_only(fn, logits, reqs)
    # The same on a vocabulary of 40 tokens: the bitmask has two 32-bit words, so the order of the
    # bits across words matters (token 32 * k + j is bit j of word k).
    wide = torch.tensor([row + [float(t % 5) - 1.0 for t in range(V, WIDE)]] * 2)
    reqs = [
        _req((2,), (), grammar=_grammar(vocab=WIDE)),  # greedy, at the start
        _req((2,), (6,), grammar=_grammar(accepted=(6,), vocab=WIDE), temperature=0.7),  # after 'y'
    ]
    check_rows(fn, wide, reqs, MASK_MISTAKES)
    # Grammars that allow many tokens: a bitmask word is a 32-bit int, -1 when all its tokens are allowed,
    # above 2**24 (float32's exact range) when the token of bit 30 is; small words never show a float reading.
    reqs = [
        _req((2,), (), grammar=_grammar(".*", vocab=WIDE), temperature=1.0),  # words [-1, -1]
        _req((2,), (), grammar=_grammar("(a|<t30>)+", vocab=WIDE)),  # greedy; word 0 is 2**30 + 2
    ]
    check_rows(fn, wide, reqs, MASK_MISTAKES)


def case_mixed(fn):
    logits = _random(6, 6)
    reqs = [
        _req((1, 4, 4), (5, 6, 6), repetition_penalty=1.2, frequency_penalty=0.3, presence_penalty=0.1),
        _req((2,), (), grammar=_grammar(), logit_bias={4: -2.0, 5: 1.0}),
        _req((3, 3), (8,), temperature=0.9, top_p=0.95),
        _req((9,), (6,), grammar=_grammar(accepted=(6,)), repetition_penalty=1.4, temperature=1.0),
        _req((1,), (1, 2, 1), presence_penalty=-0.5, logit_bias={1: 0.5}),
        _req((7,), (7, 7)),
    ]
    check_rows(fn, logits, reqs, PENALTY_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES)


# --- the real engine ------------------------------------------------------------------------------------

CAT = [{"role": "user", "content": "Repeat the word cat five times."}]
COUNT = [{"role": "user", "content": "Count from 1 to 5."}]
SKY = [{"role": "user", "content": "Is the sky blue? Answer yes or no."}]
PERSON = [{"role": "user", "content": "Give me a person as JSON."}]
PERSON_SCHEMA = (
    '{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, '
    '"required": ["name", "age"]}'
)
NO, YES, NO_LOWER = 5230, 10539, 4607  # 'No', 'Yes' and 'no' in SmolLM2's vocabulary


def penalty_requests() -> tuple[list[SamplingParams], list]:
    """Each penalised request's greedy answer differs from the plain one (tests check it)."""
    params = [
        SamplingParams(max_tokens=10, repetition_penalty=1.3, logprobs=True, top_logprobs=2),
        SamplingParams(max_tokens=10, frequency_penalty=2.0, presence_penalty=2.0, logprobs=True),
        SamplingParams(max_tokens=10),
    ]
    return params, [CAT, COUNT, CAT]


def bias_grammar_requests() -> tuple[list[SamplingParams], list]:
    """Greedy rows: a bias that bans 'No', a regex with a bias inside it, a JSON schema, a plain row."""
    params = [
        SamplingParams(max_tokens=8, logit_bias={YES: 3.0, NO: -100.0}),  # ids not in increasing order
        SamplingParams(max_tokens=8, regex=YES_NO, logit_bias={NO_LOWER: -5.0}),
        SamplingParams(max_tokens=24, json_schema=PERSON_SCHEMA),
        SamplingParams(max_tokens=8),
    ]
    return params, [SKY, SKY, PERSON, CAT]


@dataclass
class EngineRun:
    tokens: dict[int, list[int]] = field(default_factory=dict)
    reasons: dict[int, Optional[str]] = field(default_factory=dict)
    logprobs: dict[int, list[Optional[float]]] = field(default_factory=dict)


def _reading_only(fn):
    """`fn`, stopped with a clear message at once when it changes a request's prompt or output: the
    scheduler would fail later, far from the cause (a request it no longer recognises)."""

    def guarded(logits, reqs):
        before = [(list(r.input_ids), list(r.output_ids)) for r in reqs]
        out = fn(logits, reqs)
        for r, (prompt, output) in zip(reqs, before):
            for name, was, now in (("input_ids", prompt, r.input_ids), ("output_ids", output, r.output_ids)):
                if now != was:
                    raise Mistake(
                        f"your process_logits changed req.{name} of request {r.uid} in place ({len(was)} tokens "
                        f"before the call, {len(now)} after): the scheduler keeps using them",
                        HINT_IN_PLACE[name],
                    )
        return out

    return guarded


HINT_IN_PLACE = {
    "input_ids": "only read the request: `seen = req.input_ids; seen += req.output_ids` extends the prompt itself; "
    "build a new list or a set",
    "output_ids": "only read the request: the scheduler appends to req.output_ids itself",
}


def run_with_chain(fn, params: list[SamplingParams], prompts: list, max_steps: int = 500) -> EngineRun:
    """The requests on the grading engine with `fn` as the sampler's logits chain. The engine is
    shared by every run, so the package's chain is put back afterwards, whatever happened."""
    s = new_scheduler()
    sampler = s.engine.sampler
    before = sampler.process_fn
    sampler.process_fn = _reading_only(fn)
    try:
        for uid, (prompt, sp) in enumerate(zip(prompts, params)):
            s.add_request(uid, encode(s, prompt), sp)
        steps = 0
        while not s.is_idle:
            s.step()
            steps += 1
            assert steps < max_steps, "the requests never finished"
    finally:
        sampler.process_fn = before
    run = EngineRun()
    for msg in s.io.drain():
        if msg.next_token >= 0:
            run.tokens.setdefault(msg.uid, []).append(msg.next_token)
            run.logprobs.setdefault(msg.uid, []).append(msg.logprob)
        if msg.finished:
            run.reasons[msg.uid] = msg.finish_reason
    return run


def _text(ids: list[int]) -> str:
    return tokenizer().decode(ids)


GRAMMAR_ABORT = "it sampled a token its grammar forbids, and the scheduler stops such a request"


def _compare_runs(got: EngineRun, ref: EngineRun, params: list[SamplingParams], logprobs: bool) -> None:
    for uid, sp in enumerate(params):
        asked = _params(sp, sp.grammar_spec is not None)
        mine, theirs = got.tokens.get(uid, []), ref.tokens[uid]
        if got.reasons.get(uid) == "abort" and sp.grammar_spec is not None:
            raise AssertionError(
                f"request {uid} ({asked}, {sp.grammar_spec[0]}) finished with 'abort' after {mine}: {GRAMMAR_ABORT}"
            )
        for k, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                before = f"after {_text(theirs[:k])!r}, where both agree" if k else "the first token"
                raise AssertionError(
                    f"request {uid} ({asked}): token {k} is {a} ({_text([a])!r}), the package's chain gave {b} "
                    f"({_text([b])!r}), {before}"
                )
        assert len(mine) == len(theirs) and got.reasons.get(uid) == ref.reasons[uid], (
            f"request {uid} ({asked}): {len(mine)} tokens, finish {got.reasons.get(uid)!r}; the package's chain "
            f"gave {len(theirs)}, finish {ref.reasons[uid]!r}"
        )
        if not logprobs or not sp.logprobs:
            continue
        for k, (a, b) in enumerate(zip(got.logprobs[uid], ref.logprobs[uid])):
            if a is None or abs(a - b) > 1e-4:
                raise AssertionError(
                    f"request {uid} ({asked}) asked for logprobs: token {k} has logprob {a}, the package's "
                    f"{b:.4f}. Logprobs are the model's own distribution, taken from the tensor your function "
                    "was given, after it returns: did your function change that tensor in place?"
                )


def reference_run(requests: Callable[[], tuple[list[SamplingParams], list]]) -> EngineRun:
    """`requests()` with the package's chain, computed once per process (untimed)."""
    return remember(f"logits_chain/{requests.__name__}", lambda: run_with_chain(package_chain, *requests()))


def _recording(fn, calls: list):
    """`fn`, keeping each batch it saw (the model's logits, the requests as they were) and what it
    returned, so that every batch can be compared with the package's chain afterwards."""

    def recorded(logits, reqs):
        given = logits.clone()
        seen = [Req(r.uid, list(r.input_ids), r.sampling_params, list(r.output_ids)) for r in reqs]
        out = fn(logits, reqs)
        calls.append((given, seen, out.detach().float().clone() if isinstance(out, torch.Tensor) else out))
        return out

    return recorded


def _compare_batches(calls: list, fn=None) -> None:
    """Each batch of the run: the rows your chain returned against the package's chain on the same
    logits. The sampled tokens alone do not show every wrong row: the argmax of a row whose positive
    logits are right never sees what happened to its negative ones."""
    for step, (given, reqs, got) in enumerate(calls):
        want = package_chain(given.clone(), reqs).float()
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise AssertionError(
                f"batch {step} of the run: process_logits must return a tensor of shape {tuple(want.shape)}"
            )
        for i, req in enumerate(reqs):
            if _close(got[i], want[i]):
                continue
            t = int((~torch.isclose(got[i], want[i], rtol=1e-4, atol=1e-4, equal_nan=False)).nonzero()[0, 0])
            found = [m for m in PENALTY_MISTAKES if _close(got[i], _chain(given[i : i + 1], [req], m)[0])]
            # On the first step no request has an output yet, so leaving the prompt alone and waiting
            # for an output give the same row: the mistake that explains every batch of the run is the
            # better guess.
            found = [m for m in found if _explains_run(calls, m)] or found
            carried = None if found else carried_tokens(fn, i, got, want, given, reqs)  # tokens of other calls
            if carried is not None:
                raise Mistake(f"in batch {step} of the run, {carried[0]}", carried[1])
            what = MISTAKES[found[0]] if found else "it is not the package's chain on that row"
            raise Mistake(
                f"the tokens came out as the package's chain gives them, but in batch {step} of the run, row {i} "
                f"({_params(req.sampling_params, False)}): token {t} is {float(got[i, t]):.4g}, the package's chain "
                f"gives {float(want[i, t]):.4g} (the model gave {float(given[i, t]):.4g}): {what}",
                HINTS[found[0]] if found else "",
            )


def _explains_run(calls: list, mistake: str) -> bool:
    """Every row of every batch of the run is the one `mistake` gives."""
    return all(
        isinstance(got, torch.Tensor)
        and all(_close(got[i], _chain(given[i : i + 1], [req], mistake)[0]) for i, req in enumerate(reqs))
        for given, reqs, got in calls
    )


def case_engine_penalties(fn):
    _call(fn, _random(1, 7), [_req()])  # an unfinished stub fails here, before the engine runs
    params, prompts = penalty_requests()
    ref = reference_run(penalty_requests)
    calls: list = []
    _compare_runs(run_with_chain(_recording(fn, calls), params, prompts), ref, params, logprobs=True)
    _compare_batches(calls, fn)


def case_engine_bias_grammar(fn):
    _call(fn, _random(1, 7), [_req()])
    params, prompts = bias_grammar_requests()
    ref = reference_run(bias_grammar_requests)
    assert ref.reasons[1] == ref.reasons[2] == "stop", "setup: the grammar requests should complete"
    run = run_with_chain(fn, params, prompts)
    try:
        _compare_runs(run, ref, params, logprobs=False)
    except AssertionError as e:
        # a grammar request that went another way (an abort, or tokens the grammar allows forbidden)
        masked = any(sp.grammar_spec is not None and run.tokens.get(u) != ref.tokens[u] for u, sp in enumerate(params))
        if GRAMMAR_ABORT not in str(e) and not masked:
            raise
        try:  # the small batches of "grammar mask, greedy rows too" name what the mask got wrong
            case_grammar(fn)
        except Mistake as unit:
            raise Mistake(f"{e}. On a small batch: {unit}", unit.hint) from None
        except Exception:  # a crash there says nothing of the mask: the engine's reading stands
            pass
        if GRAMMAR_ABORT not in str(e):
            raise
        raise AssertionError(
            f"{e}. The sampler took the argmax of your logits: greedy rows need the mask too"
        ) from None


CASES = [
    Case(
        "a row that asks for nothing comes out unchanged",
        case_plain,
        "with default sampling_params (or only temperature, top-k, top-p) a row keeps its logits exactly",
    ),
    Case(
        "repetition penalty: prompt and output tokens",
        case_repetition,
        REPETITION,
    ),
    Case(
        "frequency and presence: output tokens only",
        case_frequency_presence,
        "count req.output_ids only: logit - count * frequency_penalty - (count > 0) * presence_penalty",
    ),
    Case(
        "repetition first, then frequency and presence",
        case_penalty_order,
        "the repetition penalty scales the model's logit; then subtract",
    ),
    Case("logit_bias is added", case_bias, "logit += bias for every (token, bias) in sampling_params.logit_bias"),
    Case(
        "logit_bias after the penalties",
        case_bias_order,
        "the order is repetition, frequency and presence, logit_bias, grammar mask",
    ),
    Case(
        "only the rows that ask, each with its own values",
        case_rows,
        "row i uses reqs[i].sampling_params and nothing else",
    ),
    Case("the input tensor is not changed", case_not_in_place, "work on a copy: logits.clone()"),
    Case(
        "grammar mask, greedy rows too",
        case_grammar,
        "req.grammar.fill_mask(bitmask, row), then -inf for every forbidden token, whatever the temperature",
    ),
    Case("a batch that uses every link", case_mixed, "each row with its own links, in the chain's order"),
    Case(
        "penalties in the real engine (tokens and logprobs)",
        case_engine_penalties,
        "the sampler calls your function for every batch; logprobs come from the tensor it was given",
        engine=True,
    ),
    Case(
        "logit_bias and grammars in the real engine (greedy rows)",
        case_engine_bias_grammar,
        "greedy rows are argmax of what you return: bias and mask must be in it",
        engine=True,
    ),
    chain_case(package_chain),
]


def package_helpers() -> list[Callable]:
    """The package's pieces beside `process_logits` (its module's links, the grammar's mask), which
    a student might import one by one: none of them is an answer either."""
    helpers = [
        obj
        for obj in vars(chain_module).values()
        if callable(obj) and getattr(obj, "__module__", None) == chain_module.__name__
    ]
    return helpers + [grammar_mask]


SYMBOL = "process_logits"
SOLUTION = package_chain
REFERENCES = package_helpers()
