"""Exercise 7's shared pieces: the hand-made batches, the chain written as plain loops with one
known mistake switched on at a time, and the comparison that names the mistake a wrong row shows.

The unit cases of both score lines (`base.py`, `min_p.py`) build tiny batches by hand: a
vocabulary of 12 tokens, requests with chosen prompt and output ids, and real XGrammar matchers
compiled on that vocabulary. Every row is compared with a reference: the package's own
`process_logits`, or for the stretch `reference_chain` (the package's chain, then `_min_p`). Where a
row differs, `_chain` recomputes it with each known mistake in turn and the failure names the
mistake whose row matches the student's (their texts and hints: mistakes.py). A frequency penalty
taken off once per distinct token is then told apart by how it was written: an indexed `-=` with
repeated indices, which does not accumulate, gets a hint of its own (repeated_index.py).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from typing import Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.engine.grammar import Grammar
from minisgl_edu.engine.logits_chain import process_logits as package_chain
from minisgl_edu.grading.logits_chain.mistakes import (
    GREEDY_BY_IS_GREEDY,
    HINTS,
    MIN_P_SHORTCUT,
    MISTAKES,
    OWN_VALUES,
)
from minisgl_edu.grading.logits_chain.threshold import wrong_size

NEG_INF = float("-inf")

# The unit cases' vocabulary: token ids 0..11. XGrammar compiles regexes against it, so a grammar
# case can say which of these tokens may come next.
VOCAB = ["<eos>", "a", "b", "c", "yes", "no", "y", "es", "n", "o", "{", "}"]
V = len(VOCAB)
# The same tokens, then fillers up to 40: a bitmask of two 32-bit words, where the order of the bits
# across words matters (with 12 tokens the whole mask is one word).
WIDE_VOCAB = VOCAB + [f"<t{t}>" for t in range(V, 40)]
WIDE = len(WIDE_VOCAB)
YES_NO = "(yes|no)"

# --- the stretch link and its reference ----------------------------------------------------------


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

# The mistakes (mistakes.py) each kind of case tries, in this order.
PENALTY_MISTAKES = [
    "rep_output_only",
    "rep_prompt_only",
    "rep_waits_for_output",
    "rep_subtract",
    "rep_subtract_excess",
    "rep_inverted",
    "rep_neg_divided",
    "rep_neg_kept",
    "rep_per_occurrence",
    "freq_pres_prompt",
    "freq_pres_added",
    "freq_once",
    "freq_normalised",
    "pres_per_occurrence",
    "freq_before_rep",
    "pres_needs_freq",
    "freq_pres_pooled",
]
BIAS_MISTAKES = ["bias_replaces", "bias_first", "bias_on_model_logit"]
MASK_MISTAKES = [
    "mask_not_greedy",
    "mask_skipped",
    "mask_mirrored",
    "mask_bytes_mirrored",
    "mask_transposed",
    "mask_row_zero",
]
MIN_P_MISTAKES = [
    "min_p_absolute",
    "min_p_no_temperature",
    "min_p_first",
    "min_p_before_mask",
    "min_p_boundary",
    "min_p_by_temperature",
    "min_p_top_first",
    "min_p_batch_top",
    "min_p_kept_scaled",
    "min_p_log10",
    "min_p_max_unscaled",
]

# The mask mistakes that read the bitmask's bits in another order (allowed_tokens' keywords).
LAYOUT_MISTAKES = ["mask_mirrored", "mask_bytes_mirrored", "mask_transposed"]

# The mistakes that make a row depend on the other rows of its batch.
BATCH_MISTAKES = ["min_p_batch_top", "freq_pres_pooled"]


def allowed_tokens(
    grammar: Grammar, vocab: int, mirrored: bool = False, bytes_mirrored: bool = False, transposed: bool = False
) -> torch.Tensor:
    """[vocab] bool: the tokens `grammar` allows next (its bitmask unpacked, one bit per token; with
    `mirrored`, each word read from its high bit down, the mistake "mask_mirrored"; with
    `bytes_mirrored`, each byte of a word read from its high bit down, as numpy's unpackbits does by
    default, the mistake "mask_bytes_mirrored"; with `transposed`, bit j of every word before bit
    j + 1 of any, the mistake "mask_transposed")."""
    import xgrammar as xgr

    bitmask = xgr.allocate_token_bitmask(1, vocab)
    grammar.fill_mask(bitmask, 0)
    shifts = torch.arange(32, dtype=torch.int32)
    if mirrored:
        shifts = 31 - shifts
    elif bytes_mirrored:
        shifts = shifts // 8 * 8 + 7 - shifts % 8
    bits = (bitmask[0, :, None] >> shifts) & 1
    if transposed:
        bits = bits.T
    return bits.flatten()[:vocab].bool()


def _chain(logits: torch.Tensor, reqs: list[Req], mistake: Optional[str] = None, min_p: bool = False):
    """The chain one token at a time, with `mistake` (a key of MISTAKES) made on purpose."""
    out = logits.detach().float().clone()
    if mistake == "min_p_batch_top":
        # the largest probability of any row that min_p filters, each after its other links
        before = _chain(logits, reqs)
        batch_top = max(
            (
                torch.softmax(before[j] / r.sampling_params.temperature, dim=-1).max()
                for j, r in enumerate(reqs)
                if _min_p_of(r.sampling_params) > 0 and not r.sampling_params.is_greedy
            ),
            default=None,
        )
    for i, req in enumerate(reqs):
        sp, row = req.sampling_params, out[i]

        def repetition():
            p = sp.repetition_penalty
            if p == 1.0 or (mistake == "rep_waits_for_output" and not req.output_ids):
                return
            seen = Counter(req.input_ids + req.output_ids)
            if mistake in ("rep_output_only", "rep_prompt_only"):
                seen = Counter(req.output_ids if mistake == "rep_output_only" else req.input_ids)
            for t, count in seen.items():
                for _ in range(count if mistake == "rep_per_occurrence" else 1):
                    if mistake == "rep_subtract":
                        row[t] = row[t] - p
                    elif mistake == "rep_subtract_excess":
                        row[t] = row[t] - (p - 1)
                    elif mistake == "rep_inverted":  # the factor the other way round: p becomes 1 / p
                        row[t] = row[t] * p if row[t] > 0 else row[t] / p
                    elif row[t] > 0 or mistake == "rep_neg_divided":
                        row[t] = row[t] / p
                    elif mistake != "rep_neg_kept":  # (rep_neg_kept: a negative logit left as it is)
                        row[t] = row[t] * p

        def frequency_presence():
            ids = req.input_ids + req.output_ids if mistake == "freq_pres_prompt" else req.output_ids
            if mistake == "freq_pres_pooled":
                ids = [t for other in reqs for t in other.output_ids]
            for t, count in Counter(ids).items():
                f = sp.frequency_penalty * (1 if mistake == "freq_once" else count)
                f = f / len(ids) if mistake == "freq_normalised" else f
                r = sp.presence_penalty * (count if mistake == "pres_per_occurrence" else 1)
                if mistake == "pres_needs_freq" and sp.frequency_penalty == 0:
                    r = 0.0
                row[t] = row[t] + f + r if mistake == "freq_pres_added" else row[t] - f - r

        def bias():
            for t, b in sp.logit_bias.items():
                row[t] = b if mistake == "bias_replaces" else row[t] + b
                if mistake == "bias_on_model_logit":  # the model's logit + bias: the penalties on t undone
                    row[t] = logits[i, t].float() + b

        links = [repetition, frequency_presence, bias]
        if mistake == "freq_before_rep":
            links = [frequency_presence, repetition, bias]
        elif mistake == "bias_first":
            links = [bias, repetition, frequency_presence]
        for link in links:
            link()
        unmasked = row.clone()  # (min_p_before_mask)
        skip = mistake == "mask_skipped" or (mistake == "mask_not_greedy" and sp.is_greedy)
        # (mask_row_zero: every row reads the bitmask's row 0, which only request 0's grammar fills)
        grammar = (reqs[0].grammar if i > 0 else req.grammar) if mistake == "mask_row_zero" else req.grammar
        if req.grammar is not None and grammar is not None and not skip:
            layout = {m.removeprefix("mask_"): mistake == m for m in LAYOUT_MISTAKES}
            row.masked_fill_(~allowed_tokens(grammar, row.shape[-1], **layout), NEG_INF)
        samples = sp.temperature > 0 if mistake == "min_p_by_temperature" else not sp.is_greedy
        if min_p and _min_p_of(sp) > 0 and samples:
            source = {"min_p_first": logits[i].float(), "min_p_before_mask": unmasked}.get(mistake, row)
            temperature = 1.0 if mistake == "min_p_no_temperature" else sp.temperature
            probs = torch.softmax(source / temperature, dim=-1)
            top = torch.softmax(logits[i].float() / temperature, dim=-1) if mistake == "min_p_top_first" else probs
            top_p = batch_top if mistake == "min_p_batch_top" else top.max()
            limit = _min_p_of(sp) if mistake == "min_p_absolute" else _min_p_of(sp) * top_p
            if mistake == "min_p_log10":  # exp(log10(m)) = m ** (1 / ln 10)
                limit = _min_p_of(sp) ** (1 / math.log(10)) * top_p
            drop = probs <= limit if mistake == "min_p_boundary" else probs < limit
            if mistake == "min_p_max_unscaled":  # the scaled logits against the unscaled top logit
                drop = source / temperature < source.max() + math.log(_min_p_of(sp))
            row.masked_fill_(drop, NEG_INF)
            if mistake == "min_p_kept_scaled":
                row.div_(temperature)
        if mistake == "temperature_in_chain" and _uses_chain(req) and not sp.is_greedy:
            row.div_(sp.temperature)  # as its last link, only in rows that go through the chain
    return out


def _call(fn, logits: torch.Tensor, reqs: list[Req]) -> torch.Tensor:
    """The student's output as float32; `fn` gets a copy, so only the case that looks for it sees an
    in-place change."""
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
    if sp.top_k == 1:
        parts.append("top_k 1")
    parts.append(f"temperature {sp.temperature:g}" if sp.temperature > 0 else "greedy")
    return ", ".join(parts)


def _token(t: int) -> str:
    return f"token {t} ({WIDE_VOCAB[t]!r})" if 0 <= t < WIDE else f"token {t}"


def _first_difference(got: torch.Tensor, want: torch.Tensor, given: torch.Tensor) -> str:
    for t in range(want.shape[-1]):
        if not _close(got[t : t + 1], want[t : t + 1]):
            return (
                f"{_token(t)}: your logit {float(got[t]):.4g}, expected {float(want[t]):.4g} "
                f"(the model gave {float(given[t]):.4g})"
            )
    return "the rows differ"


def _explain_row(i: int, got, want, logits, reqs, mistakes, min_p) -> tuple[str, str]:
    """What is wrong with row i, and the hint for that mistake ("" when none is known)."""
    req = reqs[i]
    sp = req.sampling_params
    where = f"row {i} ({_describe(req)})"
    detail = _first_difference(got[i], want[i], logits[i])
    if bool(torch.isnan(got[i]).any()):
        if min_p and _min_p_of(sp) > 0 and sp.is_greedy:
            return (
                f"{where}: NaN logits. This row is greedy (temperature 0): dividing by its temperature gives "
                "inf and NaN. min_p applies only to rows that sample; leave greedy rows as they are",
                GREEDY_BY_IS_GREEDY,
            )
        return f"{where}: your logits contain NaN ({detail})", ""
    if not sp.is_greedy and sp.temperature != 1 and not (min_p and _min_p_of(sp) > 0):  # (min_p_kept_scaled)
        if _close(got[i], want[i] / sp.temperature):
            return f"{where}: {MISTAKES['temperature_in_chain']} ({detail})", HINTS["temperature_in_chain"]
    leak = _leaked_bias(i, got, want, reqs)
    if leak is not None:
        t, j = leak
        return (
            f"{where}: {_token(t)} changed by {float(got[i, t] - want[i, t]):.4g}, yet it is not in this row's "
            f"logit_bias; it is in row {j}'s ({reqs[j].sampling_params.logit_bias}): another request's bias reached "
            f"this row ({detail})",
            BIAS_OWN_ROW,
        )
    if _close(want[i], logits[i].float()):
        if not _uses_chain(req):
            return (
                f"{where}: this request asks for nothing (no penalty, no bias, no grammar), yet its logits "
                f"changed ({detail}). Apply each link only to the rows whose request uses it, each with that "
                "request's own values",
                OWN_VALUES,
            )
        if min_p and _min_p_of(sp) > 0 and sp.is_greedy and sp.temperature > 0:
            return f"{where}: this row changed ({detail}): {MISTAKES['min_p_by_temperature']}", GREEDY_BY_IS_GREEDY
        if min_p and _min_p_of(sp) > 0 and sp.is_greedy:
            return (
                f"{where}: a greedy row changed ({detail}). min_p applies only to rows that sample: the argmax "
                "of a greedy row never changes with it, and its temperature of 0 cannot be divided by",
                GREEDY_BY_IS_GREEDY,
            )
    plain = min_p and _min_p_of(sp) > 0 and not sp.is_greedy and sp.top_k == -1 and sp.top_p == 1.0
    if plain and _forgot_min_p_in_the_shortcut(got, logits, reqs):
        return f"{where}: {MIN_P_SHORTCUT} ({detail})", MIN_P_SHORTCUT_HINT
    if (
        min_p
        and _min_p_of(sp) > 0
        and not sp.is_greedy
        and _dropped_as_finite(got[i], want[i], _chain(logits, reqs)[i])
    ):
        return (
            f"{where}: the tokens below min_p's threshold came out as finite logits ({detail}): a finite logit, 0 "
            "or a large negative one, keeps a real probability after the softmax, so the sampler may still draw it",
            MIN_P_DROPPED,
        )
    variants = {m: _chain(logits, reqs, m, min_p) for m in mistakes}
    matching = [m for m, out in variants.items() if _close(got[i], out[i])]
    # Two mistakes can give the same row; the one that explains the whole batch is the better guess.
    everywhere = [m for m in matching if _close_all(got, variants[m])]
    if matching:
        found = (everywhere or matching)[0]
        return f"{where}: {MISTAKES[found]} ({detail})", HINTS[found]
    if sp.is_greedy and _close(got[i], logits[i].float()):
        return (
            f"{where}: this greedy row came out as the model gave it ({detail}). The chain applies to greedy rows "
            "too: the sampler takes the argmax of what you return",
            "apply the chain to every row, greedy ones too",
        )
    for j, other in enumerate(reqs):
        if j != i and _uses_chain(other) and other.sampling_params is not sp:
            borrowed_row = Req(req.uid, req.input_ids, other.sampling_params, req.output_ids, grammar=req.grammar)
            if _close(got[i], _reference(logits[i : i + 1], [borrowed_row], min_p)[0]):
                return (
                    f"{where}: this row got the values of row {j}'s request ({_params(other.sampling_params, False)}) "
                    f"({detail}). Each row uses its own request's sampling_params",
                    OWN_VALUES,
                )
    if min_p and _min_p_of(sp) > 0 and not sp.is_greedy:
        cut = wrong_size(got[i], _chain(logits, reqs)[i], _min_p_of(sp), sp.temperature)
        if cut is not None:
            return f"{where}: {cut[0]} ({detail})", cut[1]
    return f"{where}: {detail}", ""


BIAS_OWN_ROW = (
    "each row takes its own request's logit_bias only: add reqs[i]'s bias to row i, not to that token's column "
    "in every row of the batch"
)
MIN_P_DROPPED = "a token min_p drops becomes -inf, not 0 or another finite logit: only -inf has probability 0"


def _leaked_bias(i: int, got: torch.Tensor, want: torch.Tensor, reqs: list[Req]) -> Optional[tuple[int, int]]:
    """Row i differs only at tokens of the batch's logit_biases, one of them not in its own but in row
    j's, and off by row j's bias there (or by the other rows' biases together): (that token, j). None
    otherwise: a penalty left out on a token that another row happens to bias is not a leak."""
    own = reqs[i].sampling_params.logit_bias
    others = {t: j for j in reversed(range(len(reqs))) if j != i for t in reqs[j].sampling_params.logit_bias}
    differ = [t for t in range(want.shape[-1]) if not _close(got[i, t : t + 1], want[i, t : t + 1])]
    leaked = [t for t in differ if t in others and t not in own and _off_by_a_bias(i, t, got, want, reqs)]
    if leaked and all(t in others or t in own for t in differ) and bool(torch.isfinite(got[i, leaked]).all()):
        return leaked[0], others[leaked[0]]
    return None


def _off_by_a_bias(i: int, t: int, got: torch.Tensor, want: torch.Tensor, reqs: list[Req]) -> bool:
    """Row i's token t is off by another row's bias for t, or by the other rows' biases summed."""
    biases = [
        r.sampling_params.logit_bias[t] for j, r in enumerate(reqs) if j != i and t in r.sampling_params.logit_bias
    ]
    delta = float(got[i, t]) - float(want[i, t])
    return any(abs(delta - b) <= 1e-4 + 1e-4 * abs(b) for b in biases + [sum(biases)])


def _dropped_as_finite(got: torch.Tensor, want: torch.Tensor, before: torch.Tensor) -> bool:
    """The row is right but for tokens min_p drops (-inf in `want`, finite in `before`, the row before
    min_p), which came out finite and, for one at least, not as they were before min_p."""
    dropped = torch.isneginf(want) & torch.isfinite(before)
    kept = ~dropped
    if not bool(dropped.any()) or not bool(torch.isfinite(got[dropped]).all()) or not _close(got[kept], want[kept]):
        return False
    return not bool(torch.allclose(got[dropped], before[dropped], rtol=1e-4, atol=1e-4))


MIN_P_SHORTCUT_HINT = "a batch where min_p is the only link still needs the chain: count min_p in the shortcut"


def _forgot_min_p_in_the_shortcut(got: torch.Tensor, logits: torch.Tensor, reqs: list[Req]) -> bool:
    """Every row came back as the model gave it, in a batch where no row uses a link but min_p."""
    no_other_link = not any(r.sampling_params.has_penalties or r.sampling_params.logit_bias for r in reqs)
    no_other_link = no_other_link and all(r.grammar is None for r in reqs)
    return no_other_link and _close_all(got, logits.float())


def _reference(logits: torch.Tensor, reqs: list[Req], min_p: bool) -> torch.Tensor:
    chain = reference_chain if min_p else package_chain
    return chain(logits.clone(), reqs).float()


# --- hand-made requests -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _compiled(regex: str, vocab: int = V):
    import xgrammar as xgr

    words = WIDE_VOCAB[:vocab]
    info = xgr.TokenizerInfo(words, vocab_type=xgr.VocabType.RAW, vocab_size=vocab, stop_token_ids=[0])
    return xgr.GrammarCompiler(info, max_threads=1).compile_regex(regex)


def _grammar(regex: str = YES_NO, accepted: tuple[int, ...] = (), vocab: int = V) -> Grammar:
    """A matcher of `regex` over the first `vocab` tokens of WIDE_VOCAB (the unit cases' 12, or 40)."""
    grammar = Grammar(_compiled(regex, vocab))
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
