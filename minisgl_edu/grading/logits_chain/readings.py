"""What a wrong row's difference IS, read when no known mistake (mistakes.py) gives the student's row.

`check_rows` (check.py) first recomputes a wrong row with each known mistake made on purpose. When none
of them gives the student's row, the readings here look at the difference itself and name the class
of mistake it belongs to, with the positions, tokens or rows it concerns, so that a mistake of the
same kind written another way is named too:

- `one_kind_only` (exclusive_penalties.py): a row that asks for the repetition penalty and for frequency or
  presence got only one kind, the other skipped because of it (an elif between the penalties);
  `presence_beside_frequency` there: presence skipped because the row has frequency.
- `uncounted_outputs`: some tokens of req.output_ids were not counted, by the frequency and presence
  penalties or by every penalty: which positions (the newest, the first ones, ...).
- `unscaled_seen`: some tokens of req.input_ids or req.output_ids were not scaled by the repetition
  penalty: which tokens, and at which positions (the newest output token, the first ones, ...).
- `kept_changed`: min_p cut the right tokens, but the tokens it keeps did not keep their logits
  (log-probabilities, a shift, a factor).
- `no_token_left` (no_token_left.py): min_p dropped every token of a row, the top one too (a cut above
  the max, as math.log1p(min_p) = ln(1 + min_p) puts it).
- `min_p_skipped`: a row that samples with min_p came back with no cut at all. The answer is run
  again on that row with one of its other settings taken away (its grammar, its bias, its
  penalties, top_k and top_p, its temperature, the other rows of the batch) to find the one that
  makes it skip min_p, or with a grammar that forbids nothing added (`min_p_only_with_grammar`, for
  the generated phase too): min_p written inside the grammar's `if`.
- `misplaced_mask`: a row with a grammar is wrong, and the answer gets the batch right once the rows
  that have a grammar are moved to its front: the bitmask's rows are not the batch's (bitmask_rows.py).
- `wrong_bits` (mask_bits.py): a row with a grammar kept the wrong tokens: which ones were allowed with a
  bit of 0, or forbidden with a bit of 1, and where their bits are.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from typing import Callable, Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.logits_chain.bitmask_rows import bitmask_rows
from minisgl_edu.grading.logits_chain.chain import (
    WIDE,
    V,
    _call,
    _close,
    _describe,
    _first_difference,
    _grammar,
    _min_p_of,
    _reference,
    _token,
)
from minisgl_edu.grading.logits_chain.count_pairs import swapped_counts
from minisgl_edu.grading.logits_chain.exclusive_penalties import one_kind_only, presence_beside_frequency
from minisgl_edu.grading.logits_chain.mask_bits import wrong_bits
from minisgl_edu.grading.logits_chain.mistakes import REPETITION
from minisgl_edu.grading.logits_chain.no_token_left import no_token_left

Reading = Optional[tuple[str, str]]  # (the failure's message, its hint), or None when it does not apply


def read_difference(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req], min_p: bool) -> Reading:
    """The first reading that names what is wrong with row i, or None."""
    return (
        one_kind_only(fn, i, got, want, logits, reqs, min_p)  # before uncounted_outputs: it looks the same
        or presence_beside_frequency(fn, i, got, want, logits, reqs, min_p)  # (the same, one link down)
        or uncounted_outputs(i, got, want, logits, reqs, min_p)
        or swapped_counts(i, got, want, logits, reqs, min_p)  # the right counts on other tokens
        or unscaled_seen(i, got, want, logits, reqs, min_p)
        or kept_changed(i, got, want, logits, reqs, min_p)
        or no_token_left(fn, i, got, want, logits, reqs, min_p)
        or min_p_skipped(fn, i, got, want, logits, reqs, min_p)
        or misplaced_mask(fn, i, got, want, logits, reqs, min_p)
        or wrong_bits(fn, i, got, want, logits, reqs, min_p)
    )


def _where(i: int, got, want, logits, reqs: list[Req]) -> tuple[str, str]:
    return f"row {i} ({_describe(reqs[i])})", _first_difference(got[i], want[i], logits[i])


def _samples_with_min_p(sp: SamplingParams, min_p: bool) -> bool:
    return min_p and _min_p_of(sp) > 0 and not sp.is_greedy


# --- output tokens left out of the counts ---------------------------------------------------------------


def _counted_less(got: torch.Tensor, want: torch.Tensor, output: list[int], f: float, p: float) -> Optional[Counter]:
    """How many occurrences of each token the row's frequency and presence penalties left out, when the
    row is the chain's with fewer occurrences counted (and nothing else different); None otherwise."""
    counts, missing = Counter(output), Counter()
    for t in range(want.shape[-1]):
        w, g = float(want[t]), float(got[t])
        if math.isinf(w) or math.isinf(g):
            if w != g:
                return None
            continue
        c = counts.get(t, 0)
        for counted in range(c, -1, -1):  # the most occurrences that explain the number first
            if abs(g - (w + f * (c - counted) + (p if c and not counted else 0.0))) <= 1e-4 + 1e-4 * abs(w):
                break
        else:
            return None
        if counted < c:
            missing[t] = c - counted
    return missing or None


def _history_cut(i: int, got: torch.Tensor, logits, reqs: list[Req], min_p: bool) -> Optional[Counter]:
    """The occurrences left out when row i is the chain's on its request with the newest k (or the
    first k) output tokens taken away, every penalty counting the shorter output; None otherwise."""
    req, output = reqs[i], reqs[i].output_ids
    if not req.sampling_params.has_penalties:
        return None
    for k in range(1, len(output) + 1):
        for shorter in (output[:-k], output[k:]):
            variant = Req(req.uid, list(req.input_ids), req.sampling_params, list(shorter), grammar=req.grammar)
            if _close(got[i], _reference(logits[i : i + 1], [variant], min_p)[0]):
                return Counter(output) - Counter(shorter)
    return None


def _positions(output: list[int], missing: Counter) -> str:
    """Which positions of req.output_ids `missing` stands for, in words."""
    n, k = len(output), sum(missing.values())
    newest, first = Counter(output[n - k :]) == missing, Counter(output[:k]) == missing
    if newest and not first:
        if k == 1:
            return f"position {n - 1} ({_token(output[-1])}), the newest one, req.output_ids[-1]"
        return f"positions {list(range(n - k, n))}, the newest {k}, req.output_ids[-{k}:]"
    if first and not newest:
        return f"positions {list(range(k))}, the first {k}, req.output_ids[:{k}]"
    counts = Counter(output)
    return "; ".join(
        f"{_token(t)} counted {counts[t] - m} of its {counts[t]} times (at positions "
        f"{[j for j, s in enumerate(output) if s == t]})"
        for t, m in sorted(missing.items())
    )


def _what_to_count(output: list[int], missing: Counter) -> str:
    """The hint's advice for the occurrences `missing` left out of `output`'s counts."""
    counts = Counter(output)
    once = {t for t, c in counts.items() if c == 1}
    if set(missing) == once and all(missing[t] == 1 for t in once) and len(counts) > len(once):
        return (
            "The tokens that occur only once were left out and the repeated ones counted: presence subtracts "
            "(count > 0) * presence_penalty, so once is enough"
        )
    newest = " the newest (req.output_ids[-1]) included," if missing[output[-1]] else ""
    return f"Count every token of req.output_ids,{newest} each time it occurs"


def uncounted_outputs(i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Reading:
    """Row i is the chain's with some output tokens not counted: by the frequency and presence
    penalties (read token by token from the difference), or by every penalty (the chain on the
    request with its newest or first output tokens taken away)."""
    req = reqs[i]
    sp, output = req.sampling_params, req.output_ids
    if not output:
        return None
    missing, by = None, "the frequency/presence penalty"
    if (sp.frequency_penalty or sp.presence_penalty) and not _samples_with_min_p(sp, min_p):
        missing = _counted_less(got[i], want[i], output, sp.frequency_penalty, sp.presence_penalty)
    if missing is None and not (sp.frequency_penalty or sp.presence_penalty):
        return None  # the repetition penalty is the only one: unscaled_seen names the tokens it left out
    if missing is None:
        missing, by = (
            _history_cut(i, got, logits, reqs, min_p),
            "the penalties (the row is the chain's on a shorter output)",
        )
    if missing is None:
        return None
    where, detail = _where(i, got, want, logits, reqs)
    which = _positions(output, missing)
    return (
        f"{where}: some output tokens were not counted by {by}: {which}, of output {output}. Every token of "
        f"req.output_ids counts, from the first to the newest, however often it occurs ({detail})",
        f"some output tokens were not counted by {by.split(' (')[0]}: {which}. {_what_to_count(output, missing)}",
    )


# --- seen tokens the repetition penalty left unscaled ------------------------------------------------


def _unscaled(got: torch.Tensor, want: torch.Tensor, given: torch.Tensor, seen: set[int], p: float) -> Optional[set]:
    """The seen tokens whose logit came back as the chain's with the repetition penalty's scaling left
    out (and every other token as the chain's); None when the row differs in any other way."""
    missing = set()
    for t in range(want.shape[-1]):
        w, g, x = float(want[t]), float(got[t]), float(given[t])
        if math.isinf(w) or math.isinf(g):
            if w != g:
                return None
            continue
        if abs(g - w) <= 1e-4 + 1e-4 * abs(w):
            continue
        scaled = x / p if x > 0 else x * p
        if t not in seen or abs(g - (w - scaled + x)) > 1e-4 + 1e-4 * abs(w):
            return None
        missing.add(t)
    return missing or None


def _which_unscaled(prompt: list[int], output: list[int], missing: set) -> str:
    """The positions the unscaled tokens stand for, in words: a cut at either end of the output or of the
    prompt when one gives exactly these tokens, else each token with its positions."""
    seen = set(prompt) | set(output)
    cuts = []
    for k in range(1, max(len(prompt), len(output)) + 1):
        newest = "req.output_ids[-1] (the newest output token)" if k == 1 else f"req.output_ids[-{k}:] (the newest {k})"
        cuts += [
            (set(prompt) | set(output[:-k]), newest, k <= len(output)),
            (set(prompt) | set(output[k:]), f"req.output_ids[:{k}] (the first {k} of the output)", k <= len(output)),
            (set(prompt[:-k]) | set(output), f"req.input_ids[-{k}:] (the last {k} of the prompt)", k <= len(prompt)),
            (set(prompt[k:]) | set(output), f"req.input_ids[:{k}] (the first {k} of the prompt)", k <= len(prompt)),
        ]
    tokens = ", ".join(_token(t) for t in sorted(missing))
    for kept, where, possible in cuts:
        if possible and seen - kept == missing:
            return f"{tokens}, seen only in {where}"
    return "; ".join(
        f"{_token(t)} (prompt positions {[j for j, s in enumerate(prompt) if s == t]}, output positions "
        f"{[j for j, s in enumerate(output) if s == t]})"
        for t in sorted(missing)
    )


def unscaled_seen(i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Reading:
    """Row i is the chain's but for seen tokens (of the prompt or the output) that the repetition penalty
    did not scale: which ones, and where they were seen."""
    req = reqs[i]
    sp = req.sampling_params
    if sp.repetition_penalty == 1.0 or _samples_with_min_p(sp, min_p):
        return None
    seen = set(req.input_ids) | set(req.output_ids)
    missing = _unscaled(got[i], want[i], logits[i].float(), seen, sp.repetition_penalty)
    if missing is None:
        return None
    where, detail = _where(i, got, want, logits, reqs)
    if missing == seen:
        return _no_token_scaled(where, detail, sp)
    which = _which_unscaled(req.input_ids, req.output_ids, missing)
    newest = " the newest output token included," if req.output_ids and req.output_ids[-1] in missing else ""
    return (
        f"{where}: some seen tokens were not scaled by the repetition penalty: {which}; prompt {req.input_ids}, "
        f"output {req.output_ids}. It scales once every distinct token of req.input_ids and req.output_ids, from "
        f"the first to the newest ({detail})",
        f"some seen tokens were not scaled by the repetition penalty: {which}. Scale every distinct token of "
        f"req.input_ids + req.output_ids,{newest} once",
    )


def _no_token_scaled(where: str, detail: str, sp: SamplingParams) -> tuple[str, str]:
    """Every seen token of the row came back unscaled: the repetition penalty's work is not in the row."""
    if sp.frequency_penalty or sp.presence_penalty:
        return (
            f"{where}: the repetition penalty scaled none of this row's seen tokens, yet the frequency and presence "
            f"penalties were taken off ({detail}): the repetition penalty was skipped on this row, or its work was "
            "lost when they were taken off the model's logits. Scale first, then subtract from the row it left",
            "no seen token was scaled by the repetition penalty on a row that also subtracts frequency/presence: "
            "the repetition penalty scales the model's logit; then subtract from that same row, not from the "
            "model's logits",
        )
    return (
        f"{where}: the repetition penalty scaled none of this row's seen tokens ({detail})",
        f"this row asks for repetition_penalty {sp.repetition_penalty:g}, yet no token was scaled: {REPETITION}",
    )


# --- the grammar's mask read at another row -------------------------------------------------------------


def misplaced_mask(fn, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Reading:
    """Row i has a grammar, or -inf where the chain has none or the other way round, and the answer is
    right once the grammar rows are moved to the front of the batch (bitmask_rows.py)."""
    if reqs[i].grammar is None and torch.equal(torch.isneginf(got[i]), torch.isneginf(want[i])):
        return None
    where, detail = _where(i, got, want, logits, reqs)
    return bitmask_rows(fn, logits, reqs, min_p, f"{where}: the grammar's mask on this row is not its own ({detail})")


# --- min_p's kept tokens changed ------------------------------------------------------------------------


def _how_kept_changed(g: torch.Tensor, w: torch.Tensor, before: torch.Tensor, temperature: float) -> Optional[str]:
    """How the kept tokens' logits `g` relate to the chain's `w` (same tokens): log-probabilities of the
    row, a shift or a factor common to all of them; None when no such relation holds."""
    g, w, before = g.double(), w.double(), before.double()
    at_t = f" at temperature {temperature:g}"
    logprobs = [
        ("the row's log-probabilities, log_softmax of the row", torch.log_softmax(w, -1)),
        (f"the row's log-probabilities{at_t}, log_softmax(row / temperature)", torch.log_softmax(w / temperature, -1)),
        ("log-probabilities of the row before the cut", w - torch.logsumexp(before, -1)),
        (
            f"log-probabilities of the row before the cut{at_t}",
            w / temperature - torch.logsumexp(before / temperature, -1),
        ),
    ]
    for name, values in logprobs:
        if bool(torch.allclose(g, values, rtol=1e-4, atol=1e-4)):
            return f"as {name}: these rows look like log-probabilities"
    if len(w) < 2 or float(w.max() - w.min()) < 1e-6:
        return None
    hi, lo = int(w.argmax()), int(w.argmin())
    a = float((g[hi] - g[lo]) / (w[hi] - w[lo]))
    b = float(g[hi] - a * w[hi])
    if not bool(torch.allclose(g, a * w + b, rtol=1e-4, atol=1e-4)):
        return None
    if abs(a - 1) < 1e-4:
        top = " (minus the top logit)" if abs(b + float(w.max())) < 1e-4 else ""
        return f"all moved by the same amount, {b:+.4g}{top}"
    scaled = " (1 / temperature)" if abs(a - 1 / temperature) < 1e-4 else ""
    return f"rescaled: each kept logit times {a:.4g}{scaled}" + (f", then {b:+.4g}" if abs(b) > 1e-4 else "")


def kept_changed(i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Reading:
    """Row i has -inf exactly where min_p's cut puts it, but the tokens it keeps came back changed, all
    in one way (log-probabilities, a shift, a factor): min_p was written as a transformation of the row."""
    sp = reqs[i].sampling_params
    if not _samples_with_min_p(sp, min_p):
        return None
    g, w = got[i], want[i]
    kept = torch.isfinite(w)
    if not torch.equal(torch.isneginf(g), torch.isneginf(w)) or not bool(torch.isfinite(g[kept]).all()):
        return None
    if bool(torch.allclose(g[kept], w[kept], rtol=1e-4, atol=1e-4)):
        return None
    before = _reference(logits[i : i + 1], reqs[i : i + 1], False)[0]
    how = _how_kept_changed(g[kept], w[kept], before[torch.isfinite(before)], sp.temperature)
    if how is None:
        return None
    where, detail = _where(i, got, want, logits, reqs)
    return (
        f"{where}: a kept token's logit changed: min_p cut the right tokens (-inf where expected), but the tokens it "
        f"keeps came back {how} ({detail}). min_p only sets the tokens below its threshold to -inf; every other logit "
        "stays as the chain left it (the sampler divides by the temperature and takes the softmax itself)",
        f"a kept token's logit changed: min_p only sets the cut tokens to -inf and keeps every other logit as it was "
        f"(here the kept ones came back {how.split(':')[0]})",
    )


# --- min_p skipped on some rows -------------------------------------------------------------------------


def _without(req: Req, what: str) -> Optional[Req]:
    """`req` with one of its settings taken away (None when it does not have it)."""
    sp = copy.copy(req.sampling_params)  # (keeps the stretch's min_p, set on the instance)
    sp.logit_bias = dict(sp.logit_bias)
    grammar = req.grammar
    if what == "a grammar" and grammar is not None:
        grammar = None
    elif what == "a logit_bias" and sp.logit_bias:
        sp.logit_bias = {}
    elif what == "a penalty" and sp.has_penalties:
        sp.repetition_penalty, sp.frequency_penalty, sp.presence_penalty = 1.0, 0.0, 0.0
    elif what == "top_k or top_p" and (sp.top_k != -1 or sp.top_p != 1.0):
        sp.top_k, sp.top_p = -1, 1.0
    elif what == "a temperature other than 1" and sp.temperature != 1.0:
        sp.temperature = 1.0
    else:
        return None
    return Req(req.uid, list(req.input_ids), sp, list(req.output_ids), grammar=grammar)


SETTINGS = ["a grammar", "a logit_bias", "a penalty", "top_k or top_p", "a temperature other than 1"]


def _cut_right(fn: Callable, rows: torch.Tensor, reqs: list[Req], k: int) -> bool:
    """The answer cuts row k of this batch as min_p does, where min_p drops a token in it."""
    want = _reference(rows, reqs, True)[k]
    if _close(want, _reference(rows, reqs, False)[k]):
        return False  # min_p drops nothing here: it proves nothing
    try:
        return _close(_call(fn, rows, reqs)[k], want)
    except Exception:
        return False


ALONE, PLACE = "the other rows of the batch", "its place in the batch"
NO_GRAMMAR = "no grammar"
ANY_TEXT = "[abceosny{}]*"  # a grammar that allows every token of the cases' vocabularies, <eos> included


def _with_open_grammar(req: Req, vocab: int) -> Optional[Req]:
    """`req` given a grammar that forbids nothing (None when it has a grammar, or the row is not one
    of the cases' vocabularies)."""
    if req.grammar is not None or vocab not in (V, WIDE):
        return None
    grammar = _grammar(ANY_TEXT, vocab=vocab)
    return Req(req.uid, list(req.input_ids), req.sampling_params, list(req.output_ids), grammar=grammar)


def _what_makes_it_skip(fn: Callable, i: int, logits, reqs: list[Req]) -> Optional[str]:
    """What makes the answer skip min_p on row i: ALONE when it cuts the row right in a batch of its
    own, PLACE when it does behind a row that asks for nothing, else the setting of the request
    without which it cuts the row right; None when none of these is found."""
    row, req = logits[i : i + 1], reqs[i]
    if len(reqs) > 1 and _cut_right(fn, row, [req], 0):
        return ALONE
    if _cut_right(fn, torch.cat([row, row]), [Req(req.uid + 1, [1], SamplingParams()), req], 1):
        return PLACE
    for what in SETTINGS:
        variant = _without(req, what)
        if variant is not None and _cut_right(fn, row, [variant], 0):
            return what
    variant = _with_open_grammar(req, row.shape[-1])
    if variant is not None and _cut_right(fn, row, [variant], 0):
        return NO_GRAMMAR  # its min_p sits inside the grammar's `if`
    return None


def min_p_only_with_grammar(fn: Callable, i: int, got, want, logits, reqs: list[Req]) -> Optional[str]:
    """The hint for row i, which skipped min_p, when the answer cuts it right once the row is given a grammar
    that forbids nothing (its min_p sits inside the grammar's `if`); None otherwise."""
    if fn is None or not _samples_with_min_p(reqs[i].sampling_params, True):
        return None
    variant = _with_open_grammar(reqs[i], logits.shape[-1])
    if variant is None or not _cut_right(fn, logits[i : i + 1], [variant], 0):
        return None
    reading = min_p_skipped(fn, i, got, want, logits, reqs, True)
    return reading[1] if reading is not None else None


def _why_skipped(setting: Optional[str], i: int, rows: str) -> tuple[str, str]:
    """The message's sentence and the hint's words for what makes the answer skip min_p."""
    if setting == ALONE:
        return (
            " In a batch of this row alone your function cuts it right: whether min_p applies to a row depends on "
            "the other rows of the batch in your answer.",
            f"{rows} skipped it beside the other rows, yet alone it is cut right",
        )
    if setting == PLACE:
        return (
            f" Behind another row (row 1 of a batch) your function cuts it right: it skips min_p on the row at this "
            f"place in the batch (row {i}).",
            f"{rows} skipped it at its place in the batch, yet behind another row it is cut right",
        )
    if setting == NO_GRAMMAR:
        return (
            " Given a grammar that forbids no token (all else the same), your function cuts the row right: it "
            "applies min_p only to rows that have a grammar.",
            f"{rows} skipped it, and row {i} has no grammar: your min_p runs only on rows with a grammar (is it "
            "inside the `if req.grammar is not None:` block?)",
        )
    if setting is not None:
        return (
            f" With {setting} taken away from this request (all else the same), your function cuts the row right: it "
            f"skips min_p on rows with {setting}.",
            f"{rows} skipped it, and row {i} has {setting}: rows with {setting} skip min_p",
        )
    return "", f"{rows} skipped it"


def min_p_skipped(fn: Callable, i: int, got, want, logits, reqs: list[Req], min_p: bool) -> Reading:
    """Row i samples with min_p, which drops tokens in it, yet came back as the chain gives it without
    min_p: which rows were cut and which not, and what sets the skipped row apart (found by running
    the answer again with one setting of the row taken away)."""
    if not _samples_with_min_p(reqs[i].sampling_params, min_p):
        return None
    before = _reference(logits, reqs, False)
    if _close(want[i], before[i]) or not _close(got[i], before[i]):
        return None
    cut = [
        j for j, r in enumerate(reqs) if _samples_with_min_p(r.sampling_params, True) and not _close(want[j], before[j])
    ]
    skipped = [j for j in cut if _close(got[j], before[j])]
    right = [j for j in cut if _close(got[j], want[j])]
    dropped = [
        t for t in range(want.shape[-1]) if bool(torch.isneginf(want[i, t])) and not bool(torch.isneginf(before[i, t]))
    ]
    where, detail = _where(i, got, want, logits, reqs)
    rows = f"row {skipped[0]}" if len(skipped) == 1 else f"rows {skipped}"
    why, short = _why_skipped(_what_makes_it_skip(fn, i, logits, reqs), i, rows)
    others = (
        (f" Row {right[0]} was cut right." if len(right) == 1 else f" Rows {right} were cut right.") if right else ""
    )
    return (
        f"{where}: min_p was not applied on this row: it came back as the chain gives it without min_p, yet min_p "
        f"{_min_p_of(reqs[i].sampling_params):g} drops tokens {dropped} here ({detail}).{others}{why} min_p applies to "
        "every row that samples with min_p > 0, whatever else it asks for, as the last link",
        f"min_p was not applied on some rows: {short}. Apply it to every row that samples with min_p > 0, whatever "
        "else it asks for (a grammar, a bias, penalties, top_k/top_p), after the other links",
    )
