"""Generated scenes for exercise 7 and its stretch: batches of logits with the requests they belong
to, as the sampler hands them to `process_logits`.

Where this sits in the course: the generated phase (grading/explore.py) of `logits_chain` and
`logits_chain_min_p`, run after the hand-made batches of chain.py. A scene is a batch of one to
four rows over the unit cases' vocabulary of 12 tokens. Each row has logits from a small grid (ties
and exact zeros happen, as min_p's threshold and a greedy row's temperature of 0 need), a prompt
and an output, some of them long (a token seen only 90 positions back must still be penalised),
and its own request: every penalty over its whole range, below neutral too (a repetition penalty
under 1, negative frequency and presence penalties encourage repeats, and are links all the
same), a logit bias, a real XGrammar grammar in one of its states, greedy and sampled rows, and for
the stretch min_p beside top-k, top-p and the temperature. Most values are neutral most of the
time, so batches where a single link applies come often.

What is compared, in this order: the logits returned; then what the function must leave as it was,
the tensor it was given first (the engine takes the logprobs from it after the call), then the
requests' prompts, outputs and sampling parameters, and their grammars' state (their hints: kept_inputs.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import torch
from hypothesis import strategies as st

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.explore import Difference, generated, unchanged
from minisgl_edu.grading.logits_chain.bias_pairs import bias_elsewhere
from minisgl_edu.grading.logits_chain.carried_tokens import carried_crash, carried_hint
from minisgl_edu.grading.logits_chain.chain import (
    BIAS_MISTAKES,
    MASK_MISTAKES,
    MIN_P_MISTAKES,
    PENALTY_MISTAKES,
    WIDE,
    V,
    _chain,
    _close,
    _grammar,
    _min_p_of,
    _req,
    _token,
    allowed_tokens,
)
from minisgl_edu.grading.logits_chain.column_values import values_over_tokens
from minisgl_edu.grading.logits_chain.crash_reads import empty_bias, min_p_without_default
from minisgl_edu.grading.logits_chain.kept_inputs import KEPT_HINTS, given_changed
from minisgl_edu.grading.logits_chain.log_product import multiplied_logs
from minisgl_edu.grading.logits_chain.mask_bits import wrong_bits
from minisgl_edu.grading.logits_chain.min_p_probes import makes_log10_cut, top_k_first
from minisgl_edu.grading.logits_chain.mistakes import MIN_P_SHORTCUT, MISTAKES
from minisgl_edu.grading.logits_chain.number_hints import number_hint
from minisgl_edu.grading.logits_chain.readings import kept_changed, min_p_only_with_grammar, uncounted_outputs
from minisgl_edu.grading.logits_chain.shortcuts import ROW_ZERO_HINT, skips_row_zero
from minisgl_edu.grading.logits_chain.undone_penalty import shows_on_probe
from minisgl_edu.grading.logits_chain.zeroed_rows import ZEROED, ZEROED_HINT, is_zeroed

# Logits from a grid: ties and exact zeros happen, and the numbers stay readable in a failure.
GRID = [1.0, -1.0, 2.0, 0.0, -2.5, 3.0, 0.5, -0.5]
# The logits of tokens 12..39 in a scene over the wide vocabulary (a bitmask of two words): fixed,
# so the draw stays as cheap as over 12 tokens.
FILLER = [GRID[t % len(GRID)] for t in range(WIDE - V)]
# A grammar and the tokens it already accepted: (yes|no) at its start, after 'y', after 'yes'
# (only <eos> left), after 'n'; and a regex that allows many tokens at once, among them '<t31>' over
# the wide vocabulary: bit 31 of word 0, the int32 sign bit (over 12 tokens it is [a-c]+).
GRAMMARS = [None, ("(yes|no)", ()), ("(yes|no)", (6,)), ("(yes|no)", (4,)), ("(yes|no)", (8,))]
GRAMMARS += [("([a-c]|<t31>)+", (1,))]
FAR = 64  # a repetition penalty over "the last 64 tokens" misses a token seen further back


@dataclass
class Row:
    logits: list[float]
    prompt: list[int]
    output: list[int]
    repetition_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: Optional[dict[int, float]] = None
    grammar: Optional[tuple[str, tuple[int, ...]]] = None
    temperature: float = 0.0
    top_k: int = -1
    top_p: float = 1.0
    min_p: Optional[float] = None  # the stretch only; None: not set at all, 0: set, and no filter


@dataclass
class ChainScene:
    rows: list[Row]  # with wide, each row's logits run on over the 40 tokens of WIDE_VOCAB (chain.py)


def _neutral_or(neutral: Any, *others: Any) -> Any:
    return st.one_of(st.just(neutral), st.sampled_from(others))


# Strategies built once: a strategy made inside each draw is validated again every time.
_LOGITS = st.lists(st.sampled_from(GRID), min_size=V, max_size=V)
_HEAD = st.lists(st.integers(0, V - 1), max_size=5)
_TOKEN = st.integers(0, V - 1)
_RUN = st.sampled_from([0, 0, 0, 3, 70, 90])  # a long run: a history longer than 64 tokens
_REPETITION = _neutral_or(1.0, 2.0, 0.5, 1.3, 0.8, 0.01)  # 0.01 and 2: the ends of its range (core.py)
_FREQUENCY = _neutral_or(0.0, 0.5, -0.5, 1.5, -2.0)
_PRESENCE = _neutral_or(0.0, 0.75, -0.75, 2.0, -1.0)
# {4: -1.0, 0: 2.5}: ids not in increasing order, as a client may write them (each amount stays on its own id)
_BIAS = _neutral_or(None, {3: 5.0}, {1: -100.0}, {4: -1.0, 0: 2.5}, {2: 100.0, 5: -2.0, 9: 0.5}, {4: 0.5})
_GRAMMAR = _neutral_or(None, *GRAMMARS[1:])
_TEMPERATURE = st.sampled_from([0.0, 1.0, 0.7, 1.5, 0.5])
_TOP_K = st.sampled_from([-1, 1, 3])
_TOP_P = st.sampled_from([1.0, 0.9])
_MIN_P = _neutral_or(0.0, 0.1, 0.5, 1.0, 0.3, 0.05)
# A neutral min_p is set to 0 on rows of these temperatures and not set at all on the others: 0 is
# as neutral as no min_p (`min_p > 0` decides, not `min_p is not None`).
_MIN_P_ZERO_SET = (0.7, 1.5)
_WIDE = st.sampled_from([False, False, False, True])


def _history(draw: Any, at_least_one: bool) -> list[int]:
    """A few tokens, then perhaps a long run of one token."""
    head = draw(_HEAD)
    if at_least_one and not head:
        head = [draw(_TOKEN)]
    return head + [draw(_TOKEN)] * draw(_RUN)


@st.composite
def rows(draw: Any, stretch: bool = False) -> Row:
    row = Row(
        logits=draw(_LOGITS),
        prompt=_history(draw, True),
        output=_history(draw, False),
        repetition_penalty=draw(_REPETITION),
        frequency_penalty=draw(_FREQUENCY),
        presence_penalty=draw(_PRESENCE),
        logit_bias=draw(_BIAS),
        grammar=draw(_GRAMMAR),
        temperature=draw(_TEMPERATURE),
        top_k=draw(_TOP_K),
        top_p=draw(_TOP_P),
        min_p=draw(_MIN_P) if stretch else None,
    )
    if row.min_p == 0.0 and row.temperature not in _MIN_P_ZERO_SET:
        row.min_p = None
    return row


# A batch where a single link applies, in some rows or all: the shortcuts ("does any row need the
# chain?") and the in-place mistakes show there, where nothing else changes the rows.
LINKS = ["repetition_penalty", "frequency_penalty", "presence_penalty", "logit_bias", "grammar", "min_p"]
NEUTRAL = {"repetition_penalty": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0, "logit_bias": None}
NEUTRAL |= {"grammar": None, "min_p": None}


def _only(row: Row, link: str) -> Row:
    return dataclasses.replace(row, **{name: value for name, value in NEUTRAL.items() if name != link})


@st.composite
def chain_scenes(draw: Any, stretch: bool = False) -> ChainScene:
    batch = draw(st.lists(rows(stretch), min_size=1, max_size=4))
    link = draw(st.sampled_from([None, None, *LINKS[: 6 if stretch else 5]]))
    batch = [_only(r, link) for r in batch] if link else batch
    if not stretch and draw(_WIDE):  # the same rows over 40 tokens: the grammar's bitmask has two words
        batch = [dataclasses.replace(r, logits=r.logits + FILLER) for r in batch]
    return ChainScene(batch)


# --- one scene played --------------------------------------------------------------------------------


def _requests(scene: ChainScene) -> list[Req]:
    reqs = []
    for r in scene.rows:
        params = dict(
            repetition_penalty=r.repetition_penalty,
            frequency_penalty=r.frequency_penalty,
            presence_penalty=r.presence_penalty,
            logit_bias=dict(r.logit_bias or {}),
            temperature=r.temperature,
            top_k=r.top_k,
            top_p=r.top_p,
        )
        grammar = _grammar(*r.grammar, vocab=len(r.logits)) if r.grammar else None
        reqs.append(_req(r.prompt, r.output, grammar=grammar, min_p=r.min_p, **params))
    return reqs


def _logits(scene: ChainScene) -> torch.Tensor:
    return torch.tensor([r.logits for r in scene.rows], dtype=torch.float32)


def _params(req: Req) -> tuple:
    sp = req.sampling_params
    return (
        sp.repetition_penalty,
        sp.frequency_penalty,
        sp.presence_penalty,
        dict(sp.logit_bias),
        sp.temperature,
        sp.top_k,
        sp.top_p,
        _min_p_of(sp),
    )


def _allowed(reqs: list[Req], vocab: int) -> list[Any]:
    return [allowed_tokens(r.grammar, vocab) if r.grammar is not None else None for r in reqs]


def play(fn: Any, scene: ChainScene) -> dict:
    logits, reqs = _logits(scene), _requests(scene)
    given = logits.clone()
    prompts, outputs = [list(r.input_ids) for r in reqs], [list(r.output_ids) for r in reqs]
    params, allowed = [_params(r) for r in reqs], _allowed(reqs, logits.shape[-1])
    try:
        out = fn(logits, reqs)
    except Exception as error:  # sp.min_p on a request that has none, tokens carried over: said after a probe
        what = f"your process_logits raised {type(error).__name__} ({error})"
        stretch = any(r.min_p for r in scene.rows)
        named = (
            min_p_without_default(fn, given.clone(), reqs, stretch, error, what)
            if isinstance(error, AttributeError)
            else carried_crash(fn, what) or values_over_tokens(fn, what) or empty_bias(fn, what)
        )
        if named is None:
            raise
        raise Mistake(*named) from None
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(logits.shape):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise Mistake(
            f"process_logits must return a tensor of shape {tuple(logits.shape)}, got {shape}",
            "return the logits the sampler should use: one row per request, one column per token",
        )
    returned = out.detach().float().clone()  # before anything else looks: it may be the given tensor
    return {
        "the logits it returned": returned,
        "the logits tensor it was given": unchanged(given, logits),
        "reqs' input_ids (prompts)": unchanged(prompts, [r.input_ids for r in reqs]),
        "reqs' output_ids": unchanged(outputs, [r.output_ids for r in reqs]),
        "reqs' sampling_params": unchanged(params, [_params(r) for r in reqs]),
        "what the grammars allow next": unchanged(allowed, _allowed(reqs, logits.shape[-1])),
    }


def _uses(r: Row, stretch: bool) -> list[str]:
    links = []
    if r.repetition_penalty != 1.0:
        links.append(f"repetition_penalty {r.repetition_penalty:g}")
    if r.frequency_penalty:
        links.append(f"frequency_penalty {r.frequency_penalty:g}")
    if r.presence_penalty:
        links.append(f"presence_penalty {r.presence_penalty:g}")
    if r.logit_bias:
        links.append(f"logit_bias {r.logit_bias}")
    if r.grammar:
        links.append(f"the grammar {r.grammar[0]!r} after {list(r.grammar[1])}")
    if stretch and r.min_p and not _greedy(r):
        links.append(f"min_p {r.min_p:g}")
    return links


def _greedy(r: Row) -> bool:
    return r.temperature <= 0 or r.top_k == 1


def _tokens(ids: list[int]) -> str:
    if len(ids) <= 12:
        return str(ids)
    runs, i = [], 0
    while i < len(ids):
        j = i
        while j < len(ids) and ids[j] == ids[i]:
            j += 1
        runs.append(f"{ids[i]} x{j - i}" if j - i > 2 else ", ".join(map(str, ids[i:j])))
        i = j
    return f"[{', '.join(runs)}] ({len(ids)} tokens)"


def show(scene: ChainScene, stretch: bool = False) -> str:
    lines = []
    if len(scene.rows[0].logits) > V:
        lines.append(
            f"  a vocabulary of {WIDE} tokens (two 32-bit words in a grammar's bitmask): the 12 of the "
            f"cases, then {WIDE - V} fillers, '<t{V}>' to '<t{WIDE - 1}>', whose logits are {FILLER} in every row"
        )
    for i, r in enumerate(scene.rows):
        sampling = "greedy" if r.temperature <= 0 else f"temperature {r.temperature:g}"
        if r.top_k != -1:
            sampling += f", top_k {r.top_k}"
        if r.top_p != 1.0:
            sampling += f", top_p {r.top_p:g}"
        min_p = [f"min_p {r.min_p:g}"] if stretch and r.min_p is not None else []
        asks = ", ".join(_uses(r, False) + min_p) or "nothing"
        fillers = " + the fillers' logits" if len(r.logits) > V else ""
        lines.append(f"  row {i}: logits {r.logits[:V]}{fillers}")
        lines.append(f"         prompt {_tokens(r.prompt)}, output {_tokens(r.output)}")
        lines.append(f"         asks for: {asks}; {sampling}")
    return "\n".join(lines)


# --- hints that read the difference ---------------------------------------------------------------------


def _walk(r: Row, t: int, want: float, got: float, stretch: bool) -> str:
    """How the chain computes token t's logit in row r, link by link."""
    x = r.logits[t]
    steps = [f"{_token(t)}: the model's logit {x:g}"]
    history = r.prompt + r.output
    if r.repetition_penalty != 1.0 and t in history:
        back = len(history) - max(i for i, s in enumerate(history) if s == t)
        where = "the prompt" if t not in r.output else "the output"
        p = r.repetition_penalty
        x = x / p if x > 0 else x * p
        steps.append(f"seen in {where} ({back} tokens back), repetition_penalty {p:g} -> {x:.4g}")
        if back > FAR:
            steps.append(
                f"(it is seen only {back} tokens back: the repetition penalty counts every token of the "
                "prompt and the output, however far back)"
            )
    count = r.output.count(t)
    if count and (r.frequency_penalty or r.presence_penalty):
        x = x - count * r.frequency_penalty - r.presence_penalty
        steps.append(
            f"{count} times in the output, frequency {r.frequency_penalty:g} and presence {r.presence_penalty:g} "
            f"-> {x:.4g}"
        )
    if r.logit_bias and t in r.logit_bias:
        x += r.logit_bias[t]
        steps.append(f"logit_bias {r.logit_bias[t]:g} -> {x:.4g}")
    if r.grammar and want == float("-inf") and x != want:
        steps.append("the grammar forbids it -> -inf")
    elif stretch and r.min_p and not _greedy(r) and want == float("-inf") and x != want:
        steps.append(f"below min_p {r.min_p:g} times the top probability at temperature {r.temperature:g} -> -inf")
    elif stretch and r.min_p and not _greedy(r) and got == float("-inf"):
        steps.append(
            f"its probability at temperature {r.temperature:g} is at least min_p {r.min_p:g} times the top "
            "token's (exactly at it counts): it stays"
        )
    return ", ".join(steps) + f"; expected {want:.4g}, yours {got:.4g}"


def logits_hint(scene: ChainScene, diff: Difference, stretch: bool = False, fn: Any = None) -> str:
    """The first row that differs and the mistake its numbers show (a known one, a link left out, or the chain
    walked through); `fn`, the answer, runs on a probe before a mistake a shrunk row shares is named."""
    got, want, logits, reqs = diff.got, diff.expected, _logits(scene), _requests(scene)
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return "return one row per request, one column per token"
    i = next((i for i in range(len(reqs)) if not _close(got[i], want[i])), None)
    if i is None:  # close to 1e-4 but not to 1e-5: a formula with other rounding
        return "the numbers are close but not the chain's: compute each link as the contract defines it"
    r = scene.rows[i]
    links = _uses(r, stretch)
    if not links and stretch and r.min_p and _greedy(r) and r.temperature > 0:
        return f"row {i}: {MISTAKES['min_p_by_temperature']}"
    if not links and stretch and r.min_p and _greedy(r):
        return (
            f"row {i} is greedy (sampling_params.is_greedy: temperature 0, or top_k 1 whatever the temperature) "
            f"and has min_p {r.min_p:g}: min_p applies only to rows that sample, so leave a greedy row as it is"
        )
    if said := bias_elsewhere(i, got, want, logits, reqs, stretch):  # another row's bias, or its own on other ids
        return said
    if not links and not _greedy(r) and r.temperature != 1 and _close(got[i], logits[i] / r.temperature):
        return f"row {i} asks for nothing, yet {MISTAKES['temperature_in_chain'].replace('this row', 'it', 1)}"
    if not links and is_zeroed(fn, got[i], logits[i], reqs[i]):
        return f"row {i}: {ZEROED}. {ZEROED_HINT}"
    if not links:
        return (
            f"row {i} asks for nothing, yet its logits changed: apply each link only to the rows whose request "
            "uses it, with that request's own values"
        )
    if said := number_hint(fn, i, got, logits, reqs, stretch) or carried_hint(fn, i, got, want, logits, reqs):
        return said  # NaN from 0 * -inf, exp's overflow; a row penalised for tokens it never saw
    t = next(t for t in range(want.shape[-1]) if not _close(got[i, t : t + 1], want[i, t : t + 1]))
    walk = f"row {i}, " + _walk(r, t, float(want[i, t]), float(got[i, t]), stretch)
    history = r.prompt + r.output
    if r.repetition_penalty != 1.0 and t in history and t not in history[-FAR:]:
        return walk  # it says how far back the token was seen
    # (a negative one left out may be a shortcut that takes only positive penalties for links: said below)
    if _close(got[i], logits[i]) and r.presence_penalty > 0 and not r.frequency_penalty and r.output:
        # (confirmed on a probe of its own: an answer that skips the output tokens that are in the prompt too
        # also gives this row back unchanged, and applies presence alone on the probe)
        if _close(got[i], _chain(logits, reqs, "pres_needs_freq", stretch)[i]) and shows_on_probe(
            fn, "pres_needs_freq", stretch
        ):
            newest = ". Or: its only output token, the newest (req.output_ids[-1]), was not counted"
            return f"row {i}: {MISTAKES['pres_needs_freq']}" + (newest if len(r.output) == 1 else "")
        uncounted = uncounted_outputs(i, got, want, logits, reqs, stretch) if fn is not None and not stretch else None
        if uncounted is not None:
            return f"row {i}: {uncounted[1]}"
    if skips_row_zero(fn, got, logits, reqs, stretch):  # before the links a whole batch seems to forget
        return f"row 0: {ROW_ZERO_HINT}"
    if stretch and _close(got[i], logits[i]) and _shortcut_forgets_min_p(scene, got, want, logits):
        return f"row {i}: {min_p_only_with_grammar(fn, i, got, want, logits, reqs) or MIN_P_SHORTCUT}"
    beside = r.top_k != -1 or r.top_p != 1.0
    if stretch and r.min_p and not _greedy(r) and beside and _close(got[i], _chain(logits, reqs)[i]):
        return (
            f"row {i} came back as the chain gives it without min_p, but it samples with min_p {r.min_p:g}: min_p "
            "drops the tokens below its threshold (top_k and top_p come later, in the sampler: min_p applies "
            "beside them)"
        )
    if _close(got[i], logits[i]):
        numbers = any(
            o.repetition_penalty != 1 or o.frequency_penalty or o.presence_penalty or o.logit_bias for o in scene.rows
        )
        shortcut = SHORTCUT_GRAMMARS if r.grammar and not numbers and _close(got, logits) else ""
        return (
            f"row {i} came back as the model gave it, but its request uses {', '.join(links)}: "
            + "; ".join(_why_it_changes(r, stretch))
            + shortcut
        )
    top_k = _cut_read(fn, i, got, want, logits, reqs, stretch)  # a product of logs, or top_k first
    if top_k is not None:
        return top_k
    # the narrowest first: on a shrunk row (min_p 1, ties) dropping the tokens at the threshold and an
    # absolute threshold drop the same tokens
    narrow = ["min_p_boundary"] + [m for m in MIN_P_MISTAKES if m != "min_p_boundary"] if stretch else []
    if r.grammar and "min_p_before_mask" in narrow:  # with no penalty or bias, both give this row: name the mask
        narrow.remove("min_p_before_mask")
        narrow.insert(narrow.index("min_p_first"), "min_p_before_mask")
    mistakes = narrow + PENALTY_MISTAKES + BIAS_MISTAKES + MASK_MISTAKES + ["temperature_in_chain"]
    for m in mistakes:
        if m == "min_p_log10" and not makes_log10_cut(fn):
            continue  # a shrunk row cut by another mistake can sit where log10's cut would: the probe decides
        if not shows_on_probe(fn, m, stretch):
            continue  # a penalty left out and one the bias undid give the same shrunk row: the probe decides
        if _close(got[i], _chain(logits, reqs, m, stretch)[i]):
            uncut = m in MIN_P_MISTAKES and _close(got[i], _chain(logits, reqs)[i])
            return f"row {i}: {MISTAKES[m]}" + (_skipped_too(r) if uncut else "")
    kept = kept_changed(i, got, want, logits, reqs, stretch) or wrong_bits(fn, i, got, want, logits, reqs, stretch)
    return f"row {i}: {kept[1]}" if kept else walk  # min_p's kept logits changed, or the mask's bits read wrong


def _cut_read(fn: Any, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], stretch: bool):
    """The hint for a min_p row whose cut a probe of the answer explains: log(min_p) times the row's max, a
    product of logs (log_product.py), or min_p applied after top_k (min_p_probes.py); None otherwise."""
    if not stretch:
        return None
    said = multiplied_logs(fn, i, got, want, logits, reqs, stretch)
    return f"row {i}: {said[1]}" if said else top_k_first(fn, i, got, logits, reqs)


def _skipped_too(r: Row) -> str:
    """For a row that came back with no min_p cut at all: skipping min_p on it gives the same row."""
    settings = [
        name
        for name, has in (
            ("a grammar", r.grammar),
            ("a logit_bias", r.logit_bias),
            ("a penalty", r.repetition_penalty != 1 or r.frequency_penalty or r.presence_penalty),
            ("top_k or top_p", r.top_k != -1 or r.top_p != 1.0),
            ("a temperature other than 1", r.temperature != 1),
        )
        if has
    ]
    like = f"rows with {' or '.join(settings)}" if settings else "some rows"
    return (
        ". Or: this row came back with no min_p cut at all, which is also what skipping min_p on it gives: if your "
        f"min_p skips {like}, that is the mistake (min_p applies to every row that samples with min_p > 0)"
    )


SHORTCUT_GRAMMARS = (
    ". Here grammars are the batch's only link, and it came back whole as the model gave it: if your function "
    "returns early when no penalty or bias is set, a grammar needs the chain too"
)


def _shortcut_forgets_min_p(scene: ChainScene, got: torch.Tensor, want: torch.Tensor, logits: torch.Tensor) -> bool:
    """The whole batch came back as the model gave it, and min_p is its only link, dropping tokens in a
    row that samples with neither top_k nor top_p beside it."""
    only_min_p = not any(_uses(r, False) for r in scene.rows)
    # a cut against the unscaled top logit drops nothing at a low temperature: that batch proves no shortcut
    unscaled = _chain(logits, _requests(scene), "min_p_max_unscaled", True)
    only_min_p = only_min_p and not all(_close(got[j], unscaled[j]) for j in range(len(scene.rows)))
    plain = any(
        r.min_p and not _greedy(r) and r.top_k == -1 and r.top_p == 1.0 and not _close(want[j], logits[j])
        for j, r in enumerate(scene.rows)
    )
    return only_min_p and plain and all(_close(got[j], logits[j]) for j in range(len(scene.rows)))


def _why_it_changes(r: Row, stretch: bool) -> list[str]:
    """Why each link of the row changes it, for a row that came back as the model gave it."""
    why = []
    if r.repetition_penalty != 1.0:
        below = " (below 1 it makes them more likely: a link all the same, only 1 is neutral)"
        seen = sorted(set(r.prompt) | set(r.output))
        # with no output yet, waiting for one and leaving the prompt alone give this same row
        first = ", from the very first step: while the output is still empty it already scales the prompt's tokens"
        why.append(
            f"the repetition penalty scales every token seen so far, in the prompt as well as the output (here {seen})"
            + (first if not r.output else "")
            + (below if r.repetition_penalty < 1.0 else "")
        )
    if r.frequency_penalty or r.presence_penalty:
        negative = r.frequency_penalty < 0 or r.presence_penalty < 0
        why.append(
            "frequency and presence change the tokens of the output"
            + (" (a negative one encourages repeats: a link all the same, only 0 is neutral)" if negative else "")
        )
    if r.logit_bias:
        why.append("the bias is added to its tokens")
    if r.grammar:
        greedy = " (greedy rows too: the sampler takes the argmax of what you return)" if _greedy(r) else ""
        why.append("the grammar's forbidden tokens become -inf" + greedy)
    if stretch and r.min_p and not _greedy(r):
        beside = " (top_k and top_p come later, in the sampler: min_p applies beside them)"
        why.append("min_p drops the tokens below its threshold" + (beside if r.top_k != -1 or r.top_p != 1.0 else ""))
    return why


def given_hint(scene: ChainScene, diff: Difference) -> str:
    return given_changed(_logits(scene), diff.got)


HINTS = {"the logits tensor it was given": given_hint, **KEPT_HINTS}


def chain_case(reference: Any, stretch: bool = False, examples: int = 200) -> Any:
    """The generated case of `logits_chain` (stretch=False) or `logits_chain_min_p`."""
    answer: list = []  # the answer being graded, once its search starts: the hint probes it once more

    def hint(scene: ChainScene, diff: Difference) -> str:
        return logits_hint(scene, diff, stretch, answer[0] if answer else None)

    hints = dict(HINTS, **{"the logits it returned": hint})
    case = generated(
        ("stretch: " if stretch else "") + f"generated: {examples} batches against the package's chain",
        chain_scenes(stretch),
        play,
        lambda scene: show(scene, stretch),
        reference,
        hints,
        examples,
        hint="each row equals the package's chain on that row; the given tensor and the requests stay as they were",
    )
    search = case.run

    def run(impl: Any) -> None:
        answer[:] = [impl]
        search(impl)

    return dataclasses.replace(case, run=run)
