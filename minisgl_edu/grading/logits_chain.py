"""Exercise 7 — the logits chain: `process_logits(logits, reqs) -> logits`.

The sampler calls it first (`Sampler.process_fn`), with one row of logits per request that samples
a token now, and draws from (or takes the argmax of) what it returns. The unit cases build tiny
batches by hand: a vocabulary of 12 tokens, requests with chosen prompt and output ids, and real
XGrammar matchers compiled on that vocabulary. Every row is compared with the package's own
`process_logits`. Where a row differs, the grader recomputes it with one known mistake at a time
(`_chain` below: the chain written as plain loops, with switches for the mistakes) and names the
mistake whose row matches the student's.

The stretch cases add `min_p`, which the engine does not have; their reference is the package's
chain followed by `_min_p` here. The last cases plug the function into the real engine
(`engine.sampler.process_fn`) and compare greedy tokens, finish reasons and logprobs with the
package's chain.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine import logits_chain as chain_module
from minisgl_edu.engine.grammar import Grammar, grammar_mask
from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import encode, new_scheduler, remember, tokenizer
from minisgl_edu.grading.own_code import borrowed

NEG_INF = float("-inf")

# The unit cases' vocabulary: token ids 0..11. XGrammar compiles regexes against it, so a grammar
# case can say which of these tokens may come next.
VOCAB = ["<eos>", "a", "b", "c", "yes", "no", "y", "es", "n", "o", "{", "}"]
V = len(VOCAB)
YES_NO = "(yes|no)"


# --- the stretch link and the reference ----------------------------------------------------------


def _min_p_of(sp: SamplingParams) -> float:
    return float(getattr(sp, "min_p", 0.0) or 0.0)


def _min_p(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """The stretch's link, which the engine does not have: in every row that samples and has
    `min_p > 0`, -inf for each token whose probability at the row's temperature is below min_p
    times the most likely token's. The kept tokens keep their logits."""
    out = logits.clone()
    for i, req in enumerate(reqs):
        sp = req.sampling_params
        if _min_p_of(sp) <= 0 or sp.is_greedy:
            continue
        probs = torch.softmax(out[i].float() / sp.temperature, dim=-1)
        out[i] = out[i].masked_fill(probs < _min_p_of(sp) * probs.max(), NEG_INF)
    return out


def reference_chain(logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """The package's logits chain, then the stretch's min_p link."""
    return _min_p(package_chain(logits, reqs), reqs)


# --- the chain as plain loops, with one mistake switched on at a time ------------------------------

MISTAKES = {
    "rep_output_only": "the repetition penalty left the prompt's tokens alone: it counts every token seen "
    "so far, in the prompt and in the output",
    "rep_subtract": "the repetition penalty was subtracted: it is a factor, not an amount (divide a positive "
    "logit by it, multiply a negative one)",
    "rep_subtract_excess": "the repetition penalty was subtracted: it is a factor, not an amount (divide a "
    "positive logit by it, multiply a negative one)",
    "rep_neg_divided": "a negative logit was divided by the repetition penalty, which moves it toward 0 and "
    "makes the token more likely: divide positive logits, multiply negative ones",
    "rep_per_occurrence": "the repetition penalty was applied once per occurrence: it applies once to every "
    "token that was seen, however often",
    "freq_pres_prompt": "the frequency or presence penalty counted the prompt's tokens: those two count the "
    "output only (the repetition penalty is the one that also counts the prompt)",
    "freq_once": "the frequency penalty was subtracted once per token, as if it were the presence penalty: "
    "subtract frequency_penalty times the token's count in the output",
    "pres_per_occurrence": "the presence penalty was subtracted once per occurrence: subtract it once for "
    "every token that occurs in the output at all",
    "freq_before_rep": "frequency and presence were applied before the repetition penalty: the chain scales "
    "first (repetition), then subtracts (frequency, presence)",
    "bias_replaces": "logit_bias replaced the logit: the bias is added to it",
    "bias_first": "logit_bias was added before the penalties, so the repetition penalty scaled the bias too: "
    "the bias comes after the penalties",
    "mask_not_greedy": "the grammar's mask was not applied to this greedy row: the sampler takes the argmax of "
    "what you return, so it would pick a token the grammar forbids. Mask every row that has a grammar, "
    "greedy ones too",
    "mask_skipped": "the grammar's mask was not applied: every token the grammar forbids must come out as -inf",
    "min_p_absolute": "min_p dropped the tokens whose probability is below min_p itself: the threshold is "
    "relative, min_p times the probability of the most likely token",
    "min_p_no_temperature": "min_p used the probabilities at temperature 1: use softmax(logits / temperature), "
    "the distribution the sampler draws from",
    "min_p_first": "min_p was decided on the logits you were given, before the other links: it is the last "
    "link, on the logits after the penalties, the bias and the mask",
}
PENALTY_MISTAKES = [
    "rep_output_only",
    "rep_subtract",
    "rep_subtract_excess",
    "rep_neg_divided",
    "rep_per_occurrence",
    "freq_pres_prompt",
    "freq_once",
    "pres_per_occurrence",
    "freq_before_rep",
]
BIAS_MISTAKES = ["bias_replaces", "bias_first"]
MASK_MISTAKES = ["mask_not_greedy", "mask_skipped"]
MIN_P_MISTAKES = ["min_p_absolute", "min_p_no_temperature", "min_p_first"]


def allowed_tokens(grammar: Grammar, vocab: int) -> torch.Tensor:
    """[vocab] bool: the tokens `grammar` allows next (its bitmask unpacked, one bit per token)."""
    import xgrammar as xgr

    bitmask = xgr.allocate_token_bitmask(1, vocab)
    grammar.fill_mask(bitmask, 0)
    bits = (bitmask[0, :, None] >> torch.arange(32, dtype=torch.int32)) & 1
    return bits.flatten()[:vocab].bool()


def _chain(logits: torch.Tensor, reqs: list[Req], mistake: Optional[str] = None, min_p: bool = False):
    """The chain one token at a time, with `mistake` (a key of MISTAKES) made on purpose."""
    out = logits.detach().float().clone()
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]

        def repetition():
            p = sp.repetition_penalty
            if p == 1.0:
                return
            seen = Counter(req.output_ids if mistake == "rep_output_only" else req.input_ids + req.output_ids)
            for t, count in seen.items():
                for _ in range(count if mistake == "rep_per_occurrence" else 1):
                    if mistake == "rep_subtract":
                        row[t] = row[t] - p
                    elif mistake == "rep_subtract_excess":
                        row[t] = row[t] - (p - 1)
                    elif row[t] > 0 or mistake == "rep_neg_divided":
                        row[t] = row[t] / p
                    else:
                        row[t] = row[t] * p

        def frequency_presence():
            ids = req.input_ids + req.output_ids if mistake == "freq_pres_prompt" else req.output_ids
            for t, count in Counter(ids).items():
                f = sp.frequency_penalty * (1 if mistake == "freq_once" else count)
                r = sp.presence_penalty * (count if mistake == "pres_per_occurrence" else 1)
                row[t] = row[t] - f - r

        def bias():
            for t, b in sp.logit_bias.items():
                row[t] = b if mistake == "bias_replaces" else row[t] + b

        links = [repetition, frequency_presence, bias]
        if mistake == "freq_before_rep":
            links = [frequency_presence, repetition, bias]
        elif mistake == "bias_first":
            links = [bias, repetition, frequency_presence]
        for link in links:
            link()
        skip = mistake == "mask_skipped" or (mistake == "mask_not_greedy" and sp.is_greedy)
        if req.grammar is not None and not skip:
            row.masked_fill_(~allowed_tokens(req.grammar, row.shape[-1]), NEG_INF)
        if min_p and _min_p_of(sp) > 0 and not sp.is_greedy:
            source = logits[i].float() if mistake == "min_p_first" else row
            temperature = 1.0 if mistake == "min_p_no_temperature" else sp.temperature
            probs = torch.softmax(source / temperature, dim=-1)
            limit = _min_p_of(sp) if mistake == "min_p_absolute" else _min_p_of(sp) * probs.max()
            row.masked_fill_(probs < limit, NEG_INF)
    return out


# --- running the student's function and explaining a difference -----------------------------------


def _own_code(fn) -> None:
    """The own-code rule also covers the package's helpers beside `process_logits` (its module's
    links and the grammar's mask), which a student might import one by one."""
    if fn is SOLUTION:
        return
    for helper in [package_chain, *_package_helpers()]:
        used = borrowed(fn, helper)
        if used:
            raise AssertionError(f"this is not your own code: it uses {used}. Write the answer yourself")


def _package_helpers() -> list[Callable]:
    helpers = [
        obj
        for obj in vars(chain_module).values()
        if callable(obj) and getattr(obj, "__module__", None) == chain_module.__name__
    ]
    return helpers + [grammar_mask]


def _call(fn, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """The student's output as float32; `fn` gets a copy, so only the case that looks for it sees an
    in-place change."""
    _own_code(fn)
    out = fn(logits.clone(), reqs)
    if out is None:
        raise AssertionError(
            "process_logits returned None: return the logits the sampler should use (a [N, vocab] tensor)"
        )
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(logits.shape):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise AssertionError(f"process_logits must return a tensor of shape {tuple(logits.shape)}, got {shape}")
    return out.detach().float()


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    if bool(torch.isnan(a).any()) or bool(torch.isnan(b).any()):
        return False
    if not torch.equal(torch.isneginf(a), torch.isneginf(b)) or not torch.equal(torch.isposinf(a), torch.isposinf(b)):
        return False
    finite = torch.isfinite(b)
    return bool(torch.allclose(a[finite], b[finite], rtol=1e-4, atol=1e-4))


def _close_all(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and all(_close(a[i], b[i]) for i in range(a.shape[0]))


def _uses_chain(req: Req) -> bool:
    sp = req.sampling_params
    return sp.has_penalties or bool(sp.logit_bias) or req.grammar is not None or _min_p_of(sp) > 0


def _describe(req: Req) -> str:
    return f"prompt {req.input_ids}, output {req.output_ids}, {_params(req.sampling_params, req.grammar is not None)}"


def _params(sp: SamplingParams, grammar: bool) -> str:
    parts = []
    if sp.repetition_penalty != 1.0:
        parts.append(f"repetition_penalty {sp.repetition_penalty:g}")
    if sp.frequency_penalty:
        parts.append(f"frequency_penalty {sp.frequency_penalty:g}")
    if sp.presence_penalty:
        parts.append(f"presence_penalty {sp.presence_penalty:g}")
    if sp.logit_bias:
        parts.append(f"logit_bias {sp.logit_bias}")
    if grammar:
        parts.append("a grammar")
    if _min_p_of(sp):
        parts.append(f"min_p {_min_p_of(sp):g}")
    parts.append("greedy" if sp.is_greedy else f"temperature {sp.temperature:g}")
    return ", ".join(parts)


def _token(t: int) -> str:
    return f"token {t} ({VOCAB[t]!r})" if 0 <= t < V else f"token {t}"


def _first_difference(got: torch.Tensor, want: torch.Tensor, given: torch.Tensor) -> str:
    for t in range(want.shape[-1]):
        if not _close(got[t : t + 1], want[t : t + 1]):
            return (
                f"{_token(t)}: your logit {float(got[t]):.4g}, expected {float(want[t]):.4g} "
                f"(the model gave {float(given[t]):.4g})"
            )
    return "the rows differ"


def _explain_row(i: int, got, want, logits, reqs, mistakes, min_p) -> str:
    req = reqs[i]
    sp = req.sampling_params
    where = f"row {i} ({_describe(req)})"
    detail = _first_difference(got[i], want[i], logits[i])
    if bool(torch.isnan(got[i]).any()):
        if min_p and _min_p_of(sp) > 0 and sp.is_greedy:
            return (
                f"{where}: NaN logits. This row is greedy (temperature 0): dividing by its temperature gives "
                "inf and NaN. min_p applies only to rows that sample; leave greedy rows as they are"
            )
        return f"{where}: your logits contain NaN ({detail})"
    if _close(want[i], logits[i].float()):
        if not _uses_chain(req):
            return (
                f"{where}: this request asks for nothing (no penalty, no bias, no grammar), yet its logits "
                f"changed ({detail}). Apply each link only to the rows whose request uses it, each with that "
                "request's own values"
            )
        if min_p and _min_p_of(sp) > 0 and sp.is_greedy:
            return (
                f"{where}: a greedy row changed ({detail}). min_p applies only to rows that sample: the argmax "
                "of a greedy row never changes with it, and its temperature of 0 cannot be divided by"
            )
    variants = {m: _chain(logits, reqs, m, min_p) for m in mistakes}
    matching = [m for m, out in variants.items() if _close(got[i], out[i])]
    # Two mistakes can give the same row; the one that explains the whole batch is the better guess.
    everywhere = [m for m in matching if _close_all(got, variants[m])]
    if matching:
        return f"{where}: {MISTAKES[(everywhere or matching)[0]]} ({detail})"
    if sp.is_greedy and _close(got[i], logits[i].float()):
        return (
            f"{where}: this greedy row came out as the model gave it ({detail}). The chain applies to greedy rows "
            "too: the sampler takes the argmax of what you return"
        )
    for j, other in enumerate(reqs):
        if j != i and _uses_chain(other) and other.sampling_params is not sp:
            borrowed_row = Req(req.uid, req.input_ids, other.sampling_params, req.output_ids, grammar=req.grammar)
            if _close(got[i], _reference(logits[i : i + 1], [borrowed_row], min_p)[0]):
                return (
                    f"{where}: this row got the values of row {j}'s request ({_params(other.sampling_params, False)}) "
                    f"({detail}). Each row uses its own request's sampling_params"
                )
    return f"{where}: {detail}"


def _reference(logits: torch.Tensor, reqs: list[Req], min_p: bool) -> torch.Tensor:
    chain = reference_chain if min_p else package_chain
    return chain(logits.clone(), reqs).float()


def _check(fn, logits: torch.Tensor, reqs: list[Req], mistakes: list[str], min_p: bool = False) -> None:
    got = _call(fn, logits, reqs)
    want = _reference(logits, reqs, min_p)
    for i in range(len(reqs)):
        if not _close(got[i], want[i]):
            raise AssertionError(_explain_row(i, got, want, logits, reqs, mistakes, min_p))


# --- hand-made requests -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _compiled(regex: str):
    import xgrammar as xgr

    info = xgr.TokenizerInfo(VOCAB, vocab_type=xgr.VocabType.RAW, vocab_size=V, stop_token_ids=[0])
    return xgr.GrammarCompiler(info, max_threads=1).compile_regex(regex)


def _grammar(regex: str = YES_NO, accepted: tuple[int, ...] = ()) -> Grammar:
    grammar = Grammar(_compiled(regex))
    for t in accepted:
        assert grammar.accept(t), f"setup: the grammar {regex!r} refused {_token(t)}"
    return grammar


def _req(prompt=(11,), output=(), grammar: Optional[Grammar] = None, min_p: Optional[float] = None, **params) -> Req:
    sp = SamplingParams(**params)
    if min_p is not None:
        sp.min_p = min_p  # the stretch's field: not one of SamplingParams' own
    return Req(0, list(prompt), sp, output_ids=list(output), grammar=grammar)


def _rows(*rows: list[float]) -> torch.Tensor:
    assert all(len(r) == V for r in rows), "setup: every row has one logit per token"
    return torch.tensor(rows, dtype=torch.float32)


def _random(n: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, V, generator=gen) * 2


# --- the cases ----------------------------------------------------------------------------------------


def case_plain(fn):
    logits = _random(3, 0)
    reqs = [
        _req((1, 2, 3), (4, 4)),
        _req((5,), (6, 7, 6), temperature=0.8, top_p=0.9),
        _req((1,), (), temperature=1.0, top_k=5, seed=3),
    ]
    _check(fn, logits, reqs, [])


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
    _check(fn, logits, reqs, PENALTY_MISTAKES)


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
    _check(fn, logits, reqs, PENALTY_MISTAKES)


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
    _check(fn, logits, reqs, PENALTY_MISTAKES)


def case_bias(fn):
    logits = _random(3, 2)
    reqs = [
        _req((1,), (2,), logit_bias={3: 5.0, 4: -100.0, 8: 2.5}),
        _req((1,), (2,)),
        _req((1,), (2,), logit_bias={0: -3.0}, temperature=0.7),
    ]
    _check(fn, logits, reqs, BIAS_MISTAKES)


def case_bias_order(fn):
    logits = _random(2, 3).abs() + 0.5  # positive logits: divided by the repetition penalty
    reqs = [
        _req((1, 2), (3,), repetition_penalty=2.0, logit_bias={2: 3.0, 3: -1.0, 6: 1.0}),
        _req((4,), (5, 5), frequency_penalty=0.5, repetition_penalty=1.5, logit_bias={5: 2.0}),
    ]
    _check(fn, logits, reqs, BIAS_MISTAKES + PENALTY_MISTAKES)


def case_rows(fn):
    logits = _random(5, 4)
    reqs = [
        _req((1, 2), (3, 3)),
        _req((1, 2), (3, 3), repetition_penalty=1.3, frequency_penalty=0.6),
        _req((4, 5), (6,), temperature=1.0, top_p=0.9),
        _req((7,), (8, 8), logit_bias={9: 4.0}, presence_penalty=0.2),
        _req((1, 2), (3, 3), temperature=0.5),
    ]
    _check(fn, logits, reqs, PENALTY_MISTAKES + BIAS_MISTAKES)


def case_not_in_place(fn):
    logits = _random(4, 5)
    reqs = [
        _req((1, 2), (3, 3), repetition_penalty=1.3, frequency_penalty=0.5),
        _req((4,), (5,), logit_bias={6: 2.0}),
        _req((1,), (), grammar=_grammar()),
        _req((1,), (2,)),
    ]
    given = logits.clone()
    _own_code(fn)
    fn(given, reqs)
    for i in range(len(reqs)):
        if not torch.equal(given[i], logits[i]):
            raise AssertionError(
                f"your process_logits changed the tensor it was given, in place (row {i}, {_describe(reqs[i])}). "
                "The engine takes logprobs from that same tensor after your function returns, so a client "
                "asking for logprobs would get the penalised numbers instead of the model's. Work on a copy "
                "(note that logits.float() is the same tensor when it already is float32; clone() copies)"
            )


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
    _check(fn, logits, reqs, MASK_MISTAKES)


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
    _check(fn, logits, reqs, PENALTY_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES)


# Stretch: min_p. Kept: p >= min_p * p_max, i.e. logit >= top logit + temperature * ln(min_p).

MIN_P_ROW = [4.0, 2.2, 1.95, 1.0, 0.0, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]


def case_min_p_relative(fn):
    # At temperature 1 with min_p 0.1 the threshold is 4 - 2.30 = 1.70: tokens 0, 1, 2 stay. Token 2's
    # probability is about 0.09, below 0.1: an absolute threshold drops it.
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=1.0, min_p=0.1), _req(temperature=1.0, min_p=0.3)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


def case_min_p_temperature(fn):
    # Row 0, min_p 0.1 at T = 0.5: the threshold is 4 - 1.15, only token 0 stays (at temperature 1,
    # tokens 1 and 2 would stay too). Row 1, min_p 0.2 at T = 2: the threshold is 4 - 3.22, tokens 0,
    # 1, 2, 3 and 9 stay (at temperature 1, only token 0).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [_req(temperature=0.5, min_p=0.1), _req(temperature=2.0, min_p=0.2)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


def case_min_p_after_the_links(fn):
    # Token 0, the model's favourite, is banned by a bias (row 0) and forbidden by the grammar (row 1):
    # min_p's top token is the best of what is left. Row 0 keeps 1, 2, 3 and 9 (above 2.2 - 1.39);
    # row 1's grammar allows 4, 5, 6 and 8, of which 8 and 4 stay (above 0.5 - 0.69).
    logits = _rows(MIN_P_ROW, MIN_P_ROW)
    reqs = [
        _req(temperature=1.0, min_p=0.25, logit_bias={0: -100.0}),
        _req(temperature=1.0, min_p=0.5, grammar=_grammar()),
    ]
    _check(fn, logits, reqs, MIN_P_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES, min_p=True)


def case_min_p_greedy(fn):
    # No logit of exactly 0 here: dividing by a temperature of 0 gives +-inf, not NaN, so a filter
    # that forgot the greedy rows visibly drops tokens.
    row = [4.0, 2.2, 1.95, 1.0, 0.3, -1.0, -3.0, -0.5, 0.5, 1.5, -2.0, 0.2]
    logits = _rows(row, row)
    reqs = [_req(min_p=0.2), _req(min_p=0.0, temperature=1.0)]
    _check(fn, logits, reqs, MIN_P_MISTAKES, min_p=True)


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
        SamplingParams(max_tokens=8, logit_bias={NO: -100.0, YES: 3.0}),
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


def run_with_chain(fn, params: list[SamplingParams], prompts: list, max_steps: int = 500) -> EngineRun:
    """The requests on the grading engine with `fn` as the sampler's logits chain. The engine is
    shared by every run, so the package's chain is put back afterwards, whatever happened."""
    s = new_scheduler()
    sampler = s.engine.sampler
    before = sampler.process_fn
    sampler.process_fn = fn
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


def _compare_runs(got: EngineRun, ref: EngineRun, params: list[SamplingParams], logprobs: bool) -> None:
    for uid, sp in enumerate(params):
        asked = _params(sp, sp.grammar_spec is not None)
        mine, theirs = got.tokens.get(uid, []), ref.tokens[uid]
        if got.reasons.get(uid) == "abort" and sp.grammar_spec is not None:
            raise AssertionError(
                f"request {uid} ({asked}, {sp.grammar_spec[0]}) finished with 'abort' after {mine}: it sampled "
                "a token its grammar forbids, and the scheduler stops such a request. The sampler took the "
                "argmax of your logits: greedy rows need the mask too"
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


def case_engine_penalties(fn):
    _call(fn, _random(1, 7), [_req()])  # an unfinished stub fails here, before the engine runs
    params, prompts = penalty_requests()
    ref = reference_run(penalty_requests)
    _compare_runs(run_with_chain(fn, params, prompts), ref, params, logprobs=True)


def case_engine_bias_grammar(fn):
    _call(fn, _random(1, 7), [_req()])
    params, prompts = bias_grammar_requests()
    ref = reference_run(bias_grammar_requests)
    assert ref.reasons[1] == ref.reasons[2] == "stop", "setup: the grammar requests should complete"
    _compare_runs(run_with_chain(fn, params, prompts), ref, params, logprobs=False)


CASES = [
    Case(
        "a row that asks for nothing comes out unchanged",
        case_plain,
        "with default sampling_params (or only temperature, top-k, top-p) a row keeps its logits exactly",
    ),
    Case(
        "repetition penalty: prompt and output tokens",
        case_repetition,
        "once per token in req.input_ids + req.output_ids: logit / p when positive, logit * p otherwise",
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
    Case(
        "stretch: min_p is relative to the most likely token",
        case_min_p_relative,
        "keep a token when p >= min_p * max(p); -inf for the others",
    ),
    Case(
        "stretch: min_p at the row's temperature",
        case_min_p_temperature,
        "p = softmax(logits / temperature), the distribution the sampler draws from",
    ),
    Case(
        "stretch: min_p after the other links",
        case_min_p_after_the_links,
        "min_p is the last link: decide on the logits after the bias and the mask",
    ),
    Case(
        "stretch: min_p leaves greedy rows alone",
        case_min_p_greedy,
        "only rows that sample (not sampling_params.is_greedy) with min_p > 0",
    ),
]
SYMBOL = "process_logits"
SOLUTION = reference_chain
