"""Exercise 8: a stop string looked for in the decoded tail with its edges' whitespace removed.

`s in req.decode(tail).strip()` (or `.rstrip()`, `.lstrip()`), "the tokens decode with a leading
space": the text loses the whitespace at its ends. A stop string that ends in a newline or a space
('\\n', 'END\\n', ' one ') ends the tail on the token that completes it, so that whitespace is cut
away and the stop string is missed there (found a token late, when text follows, or never); one that
begins with a space at the tail's start (' one two', begun by the output ' one') is missed the same way.
A stop string is matched in the text exactly as decoded. The unit case "a stop string across
accepted tokens" (base.py) sends the stop string '\\n' completed by an accepted draft; step.py and
scenes.py name the mistake only when the answer's result on the failing step is the one of a step
that strips the tail that way, and the answer, on small steps of its own, does the same.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

STRIPPED = (
    "the stop strings were looked for in the decoded tail with the whitespace at its ends removed (strip(), "
    "rstrip() or lstrip()): a stop string that ends in a newline or a space ('\\n', 'END\\n', ' one ') is "
    "completed by the token at the end of the tail, so that whitespace is stripped away and the stop string is "
    "missed on its token (found a token late, or never); one that begins with a space is missed at the tail's "
    "start the same way. Search s in req.decode(tail) on the text exactly as decoded, changing neither the "
    "text nor the stop strings: a stop string may begin or end with a space or a newline"
)
STRIPPED_HINT = (
    "do not strip() the decoded tail: the stop string is searched in the text as it is, whitespace at its "
    "ends included (s in req.decode(tail)); a stop string may end in a newline or begin with a space"
)

# the ways of removing the whitespace at the text's ends
STRIPS: dict[str, Callable[[str], str]] = {"strip": str.strip, "rstrip": str.rstrip, "lstrip": str.lstrip}


def stripped_step(req: VerifyRequest, drafts: list[int], targets: list[int], strip: str) -> VerifyResult:
    """The verify step with the decoded tail stripped (`strip`, a key of STRIPS) before the search: the
    reference with only that one thing changed."""
    cut = STRIPS[strip]
    return _step(dataclasses.replace(_copy(req), decode=lambda ids: cut(req.decode(ids))), list(drafts), list(targets))


def _probes() -> list[tuple[VerifyRequest, list[int], list[int]]]:
    """Three small steps after the output ' one': the stop string '\\n' completed by accepted draft 1 at the
    tail's end (then ' three' follows); ' one two', which begins at the tail's start (the whole output is
    decoded); and ' two' inside the tail, which no stripping changes."""
    one, two, three, four, nl = _w(" one", " two", " three", " four", "\n")
    return [
        (_req([one], 2, stop=("\n",)), [two, nl], [two, nl, three]),
        (_req([one], 2, stop=(" one two",)), [two, three], [two, three, four]),
        (_req([one], 2, stop=(" two",)), [two, three], [two, three, four]),
    ]


def strips_the_tail(fn) -> Optional[str]:
    """The way (a key of STRIPS) the answer strips the tail, when on each probe its result is the one of
    the step that strips it so; None when no way fits (or it raises)."""
    try:
        got = [_call(fn, _copy(r), list(d), list(t)) for r, d, t in _probes()]
    except Exception:
        return None
    for strip in STRIPS:
        mistaken = [stripped_step(r, d, t, strip) for r, d, t in _probes()]
        right = [_step(r, list(d), list(t)) for r, d, t in _probes()]
        if got == mistaken and mistaken != right:
            return strip
    return None


def strips_it_here(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> bool:
    """On this step the answer's result is the one of a step that strips the tail (and not the
    reference's), and its probes show it strips the tail that same way."""
    if fn is None or not req.stop:
        return False
    right = _step(_copy(req), list(drafts), list(targets))
    here = [s for s in STRIPS if stripped_step(req, drafts, targets, s) == got != right]
    return bool(here) and strips_the_tail(fn) in here


def stripped_hint(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> Optional[str]:
    """STRIPPED when the answer's result on this step is a stripped tail's and its probes confirm it
    (the answer called here; None when it raises)."""
    if fn is None or not req.stop:
        return None
    try:
        got = _call(fn, _copy(req), list(drafts), list(targets))
    except Exception:
        return None
    return STRIPPED if strips_it_here(fn, req, drafts, targets, got) else None
