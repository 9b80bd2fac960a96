"""From the min_tokens-th output token on, counts a stop string only if the NEWEST token completed
it (it must be in the decoded tail but not in the tail without the newest token), reading "a stop
string found now was completed by the newest token" as a rule: a stop string that was held back
before the minimum is taken as spent. The contract (SGLang's choice): from the min_tokens-th token
on check_finish's rules apply unchanged, so a stop string that the decoded tail still shows
finishes the request with "stop" on that very token. Differs e.g. with stop=["two three"],
min_tokens=3 and the output tokens ' two', ' three', ' four': the reference answers "stop" on the
third token, this answer None (and the request runs on to max_tokens)."""

from __future__ import annotations

from typing import Callable, Optional

MUST_FAIL = {"stretch: stop strings wait too"}
MUST_SAY = "while min_tokens=4 held it back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "also one that completed while min_tokens held it back"


def check_finish(req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]] = None) -> Optional[str]:
    sp = req.sampling_params
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        if any(s in tail for s in sp.stop):
            return "stop"
    if len(req.output_ids) >= req.max_new_tokens:
        return "length"
    return None


def check_finish_min_tokens(
    req, eos_ids: set[int], decode: Optional[Callable[[list[int]], str]], min_tokens: int
) -> Optional[str]:
    sp = req.sampling_params
    n = len(req.output_ids)
    if n < min_tokens:
        return "length" if n >= req.max_new_tokens else None
    if not sp.ignore_eos and req.output_ids[-1] in eos_ids:
        return "stop"
    if sp.stop and decode is not None:
        window = max(len(s.encode("utf-8")) for s in sp.stop) + 4
        tail = decode(req.output_ids[-window:])
        before = decode(req.output_ids[-window - 1 : -1]) if n > 1 else ""
        # only a stop string the newest token completes counts: one held back earlier is spent
        if any(s in tail and s not in before for s in sp.stop):
            return "stop"
    if n >= req.max_new_tokens:
        return "length"
    return None
