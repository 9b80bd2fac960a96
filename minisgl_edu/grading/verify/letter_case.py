"""Exercise 8: a stop string matched with the letter case ignored.

`s.lower() in text.lower()` (or casefold()), "the model may write 'End' where the client wrote
'END'": then ' the end' counts as the stop string 'END', and the request ends on a token that
completes no stop string. A stop string is matched as the client wrote it, letter case included.
The unit case "a stop string across accepted tokens" (base.py) sends such a text; step.py names the
mistake only when the answer's result on the failing step is the one of a step that lowers the text
and the stop strings, and the answer, on small steps of its own, finds 'END' after ' END' and also
after ' End', where the reference finds nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

LETTER_CASE = (
    "the stop string was matched with the letter case ignored (the text or the stop strings lowered or "
    "casefolded before the search): with stop ['END'], the text ' the end' or ' the End' holds no stop string, "
    "only ' the END' does. A stop string is matched exactly as the client wrote it: look for s in the decoded "
    "tail as it is, changing neither the text nor the stop strings"
)
LETTER_CASE_HINT = (
    "a stop string is matched exactly as the client wrote it, letter case included: do not lower() or "
    "casefold() the text or the stop strings ('END' is not in ' the end')"
)


def _stops_on(fn, word: str) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on the accepted draft `word`, after the output ' the',
    the stop string being 'END' (the model's ' of' follows and is cut); None when it raises."""
    drafts = _w(word)
    try:
        got = _call(fn, _req(_w(" the"), 1, stop=("END",)), drafts, drafts + _w(" of"))
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == drafts


def ignores_case(fn) -> bool:
    """The answer finds 'END' in ' the END' (so it looks for stop strings at all), and also in
    ' the End', which the reference does not."""
    return _stops_on(fn, " END") is True and _stops_on(fn, " End") is True


def lowered_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The verify step with the decoded text and the stop strings lowered before the search: the
    reference with only that one thing changed."""
    lowered = dataclasses.replace(
        _copy(req), decode=lambda ids: req.decode(ids).lower(), stop=[s.lower() for s in req.stop]
    )
    return _step(lowered, list(drafts), list(targets))


def ignores_case_here(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> bool:
    """On this step the answer's result is the one of a step that lowers the text and the stop strings
    (and not the reference's), and its probes show it matches 'END' in ' End'."""
    if fn is None or not req.stop:
        return False
    mistaken = lowered_step(req, drafts, targets)
    if mistaken != got or mistaken == _step(_copy(req), list(drafts), list(targets)):
        return False
    return ignores_case(fn)
