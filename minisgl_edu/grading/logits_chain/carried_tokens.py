"""Seen tokens carried over: a row penalised for tokens that only other rows, or earlier calls, saw.

Where this sits: check.py asks `carried_tokens` about a wrong row (after kept_state.py, whose per-uid
caches a renamed batch puts right), and the generated case (scenes.py) asks it about a wrong row and
`carried_crash` about a crash. The repetition penalty's set of seen tokens belongs to one request at
one call. A helper `def seen_tokens(req, seen=set())` shares ONE set between all its calls (a default
is built once, when the def runs), as a module-level set does: it keeps every token of every earlier row
and call, so rows are penalised for tokens they never saw, and a token id from a larger vocabulary (the
engine's) later indexes past a small row's end. The probe decides: a batch of the grader's own, two
rows over a vocabulary wider than the grading model's (so a leftover token id fits), prompts [3] and
[5], repetition_penalty 2, no output, logits of 1, given twice. The chain scales token 3 of row 0 and
token 5 of row 1, nothing else; an answer that carries tokens over scales others too.
"""

from __future__ import annotations

import itertools
from typing import Optional

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.logits_chain.chain import _call, _describe, _first_difference, _token

PROBE_VOCAB = 1 << 17  # wider than the grading model's 49152 tokens, where the engine's token ids come from
PROMPTS = ([3], [5])
_UIDS = itertools.count(8_000_000_001)  # uids no case uses: a cache per uid plays no part


def _probe_batch() -> list[Req]:
    return [Req(next(_UIDS), list(p), SamplingParams(repetition_penalty=2.0), []) for p in PROMPTS]


def carried_on_probe(fn) -> list[int]:
    """The tokens the answer scaled on the probe's second call in a row whose request did not see them (at most
    8), when row 0 got row 1's token 5 among them and the probe's last token, which no request ever had, stayed
    as it was (an answer that scales every token does not carry tokens over); else empty (or when it raised)."""
    logits = torch.ones(len(PROMPTS), PROBE_VOCAB)
    try:
        _call(fn, logits, _probe_batch())  # the first call: a set that carries over now holds 3 and 5
        got = _call(fn, logits, _probe_batch())
    except Exception:
        return []
    own = torch.zeros_like(got, dtype=torch.bool)
    for row, prompt in enumerate(PROMPTS):
        own[row, prompt] = True
    changed = (got != 1.0) & ~own
    if not bool(changed[0, PROMPTS[1][0]]) or bool(changed[:, -1].any()):
        return []
    return sorted({int(t) for t in changed.nonzero()[:, 1]})[:8]


def _probe_said(tokens: list[int]) -> str:
    return (
        f"On a batch of the grader's own, called twice (two new requests over {PROBE_VOCAB} tokens, prompts [3] and "
        f"[5], repetition_penalty 2, no output), your function also scaled tokens {tokens} in a row whose own "
        "request has not seen them: the set of seen tokens carries over from row to row and from call to call"
    )


CARRIED = (
    "a row was penalised for a token only another row or an earlier call saw: the repetition penalty's set of seen "
    "tokens carries over (a mutable default argument such as seen=set(), built once when the def runs, or a "
    "module-level set); build a new set for each request, on every call"
)


def carried_tokens(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req]):
    """(message, hint) when row i, with a repetition penalty, differs at a token that is in neither its prompt
    nor its output, and the probe shows tokens carried over; None otherwise."""
    req = reqs[i]
    if fn is None or req.sampling_params.repetition_penalty == 1.0:
        return None
    own = set(req.input_ids) | set(req.output_ids)
    differ = (~torch.isclose(got[i], want[i], rtol=1e-4, atol=1e-4)).nonzero().flatten().tolist()
    outside = [t for t in differ if t not in own]
    if not outside:
        return None
    probe = carried_on_probe(fn)
    if not probe:
        return None
    t = outside[0]
    rows = [j for j, r in enumerate(reqs) if j != i and t in r.input_ids + r.output_ids]
    origin = f"it is row {rows[0]}'s" if rows else "no request of this batch has it: an earlier call's"
    return (
        f"row {i} ({_describe(req)}): {_first_difference(got[i], want[i], logits[i])}. {_token(t).capitalize()} is in neither "
        f"this row's prompt nor its output ({origin}), yet your function penalised it. {_probe_said(probe)}",
        CARRIED,
    )


def carried_hint(fn, i: int, got: torch.Tensor, want: torch.Tensor, logits, reqs: list[Req]) -> Optional[str]:
    """The generated case's hint for row i when `carried_tokens` names it; None otherwise."""
    return f"row {i}: {CARRIED}" if carried_tokens(fn, i, got, want, logits, reqs) else None


def carried_crash(fn, what: str) -> Optional[tuple[str, str]]:
    """(message, hint) for a crash (`what`) of an answer whose probe shows tokens carried over: a token id kept
    from an earlier call (the engine's vocabulary is larger) indexes past this batch's rows; None otherwise."""
    probe = carried_on_probe(fn)
    if not probe:
        return None
    return (
        f"{what}. {_probe_said(probe)}. A token kept from an earlier call (the engine's vocabulary is much larger "
        "than this batch's) is indexed in this batch's rows",
        CARRIED,
    )
