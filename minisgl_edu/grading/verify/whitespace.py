"""Exercise 8: a stop string matched with the whitespace of the text loosened.

Runs of whitespace squeezed to one space (or newlines turned into spaces) in the decoded tail, and
often in the stop strings too, before `s in text`: then ' one\\n two' or ' one  two' counts as the
stop string 'one two', and the request ends on a token that completes no stop string. A stop string
is matched as the client wrote it, character for character. The unit case "a stop string across
accepted tokens" (base.py) sends such a text; step.py names the mistake only when the answer's
result on the failing step is the one of a step that squeezes the whitespace, and the answer, on
small steps of its own, finds 'one two' where it is, misses it after ' one three', and finds it
after ' one' and a newline or a second space.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from minisgl_edu.grading.verify.plain import _step
from minisgl_edu.grading.verify.requests import _call, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult

WHITESPACE = (
    "the stop string was matched with the whitespace loosened (runs of spaces and newlines squeezed or "
    "replaced before the search): after ' one', a newline and ' two', the text ' one\\n two' holds no stop "
    "string 'one two', and neither does ' one  two' (two spaces). A stop string is matched as the client "
    "wrote it, character for character: look for s in the decoded tail as it is, changing neither the text "
    "nor the stop strings"
)
WHITESPACE_HINT = (
    "match each stop string character for character, whitespace included: a newline or two spaces in the "
    "text is not the one space of the stop string"
)


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _finds(fn, between: list[str], last: str = " two") -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on its last accepted draft `last`, after the output
    ' one' and the drafts `between` (the model's ' four' follows and is cut), the stop string being
    'one two'; None when it raises."""
    drafts = _w(*between, last)
    try:
        got = _call(fn, _req(_w(" one"), len(drafts), stop=("one two",)), drafts, drafts + _w(" four"))
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == drafts


def loosens_whitespace(fn) -> bool:
    """The answer finds 'one two' in ' one two', not in ' one three two', and also in ' one\\n two' or
    ' one  two' (a newline, or a second space, between the words)."""
    if _finds(fn, []) is not True or _finds(fn, [" three"]) is not False:
        return False
    return _finds(fn, ["\n"]) is True or _finds(fn, [" "]) is True


def squeezed_step(req: VerifyRequest, drafts: list[int], targets: list[int]) -> VerifyResult:
    """The verify step with every run of whitespace squeezed to one space, in the decoded text and in
    the stop strings, before the search: the reference with only that one thing changed."""
    squeezed = dataclasses.replace(
        req, decode=lambda ids: _squeeze(req.decode(ids)), stop=[_squeeze(s) for s in req.stop]
    )
    return _step(squeezed, list(drafts), list(targets))


def loosens_it_here(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult) -> bool:
    """On this step the answer's result is the one of a step that squeezes the whitespace (and not the
    reference's), and its probes show it matches text whose whitespace differs from the stop string's."""
    if fn is None or not req.stop:
        return False
    mistaken = squeezed_step(req, drafts, targets)
    if mistaken != got or mistaken == _step(req, list(drafts), list(targets)):
        return False
    return loosens_whitespace(fn)
