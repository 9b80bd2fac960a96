"""Exercise 8: the stop-string tail cut in CHARACTERS of the decoded text, not in tokens.

`req.decode(output)[-window:]` (the bracket closed one place too early) decodes the whole output and
keeps its last `window` characters, where the contract decodes the last `window` tokens,
`req.decode(output[-window:])`. Both hold a stop string that ends the text, but a token can carry
many characters (' international' is 14): a stop string that ends inside the newest token, whose text
runs on past it by more characters than the margin, lies before the last `window` characters and is
missed. The unit case "a stop string across accepted tokens" (base.py) sends such a step.

Read from the answer on two steps of its own that differ only in the newest token: 'two three '
completed by the leading space of ' ok' (2 characters after it: found) and of ' international' (13
after it: missed). A tail of tokens finds both. Named only when the answer's result on the failing
step is also the one a character tail gives (the step played again with it), so a hint never names a
mistake the answer did not make.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.verify.one_change import changed_step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest, VerifyResult
from minisgl_edu.scheduler.verify_step import verify_step as package_step

PROBE_STOP = "two three "  # ends with the leading space of the token after ' three'
SHORT, LONG = " ok", " international"  # 2 and 13 characters of that token's text after the stop string
CHAR_TAIL = (
    "the tail was cut in characters of the decoded text, not in tokens: req.decode(output)[-window:] keeps the "
    "last window CHARACTERS of the text, where the contract decodes the text of the last window TOKENS. "
    "{where}: it lies outside the last window characters and was missed (your step found {stop!r} completed by "
    "{short!r} and missed it completed by {long!r}). Cut the tail in tokens, then decode it: "
    "req.decode(output[-window:]), not req.decode(output)[-window:]"
)
CHAR_TAIL_HINT = (
    "cut the tail in tokens, then decode it: req.decode(output[-window:]), not req.decode(output)[-window:]: the "
    "newest token's text can run on past a stop string by more characters than the margin"
)


def _stops(fn, newest: str) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on its last accepted draft `newest`, after the output
    ' one one' and the drafts ' two', ' three' (the model's ' five' follows and is cut); None when it
    raises."""
    drafts = _w(" two", " three", newest)
    try:
        got = _call(fn, _req(_w(" one", " one"), len(drafts), stop=(PROBE_STOP,)), drafts, drafts + _w(" five"))
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == drafts


def cuts_characters(fn) -> bool:
    """The answer finds 'two three ' when the newest token's text runs on 2 characters past it and misses
    it when that text runs on 13 characters."""
    return _stops(fn, SHORT) is True and _stops(fn, LONG) is False


def _char_tail_step(req: VerifyRequest, drafts: list[int], targets: list[int], window: int) -> VerifyResult:
    """The reference step with the stop strings looked for in the last `window` characters of the whole
    output's text."""
    return changed_step(
        req, drafts, targets, tail=lambda ids: ids, found=lambda text, stop: any(s in text[-window:] for s in stop)
    )


def _windows(req: VerifyRequest) -> set[int]:
    """The character windows an answer may cut: the longest stop string in bytes or in characters, plus a
    margin of 0 to 8."""
    return {max(size(s) for s in req.stop) + m for size in (len, lambda s: len(s.encode("utf-8"))) for m in range(9)}


def _where(req: VerifyRequest, right: VerifyResult) -> str:
    """Where the stop string of this step ends, as a clause of the message ("" when no stop string ends it)."""
    if right.finish_reason != "stop" or not right.tokens:
        return ""
    output = req.output_ids + right.tokens
    text = req.decode(output)
    newest = req.decode(output[-1:])
    for s in req.stop:
        at = text.rfind(s)
        if at >= 0 and s not in req.decode(output[:-1]):
            after = len(text) - at - len(s)
            return f"Here {s!r} ends inside the newest token {newest!r}, whose text runs on {after} characters past it"
    return ""


def char_tail_class(
    fn, req: VerifyRequest, drafts: list[int], targets: list[int], got: VerifyResult
) -> Optional[tuple[str, str]]:
    """(message, hint) when the answer's result `got` on this step is the one a character tail gives (and
    not the right one) and its probe confirms it; None otherwise (or when the request has no stop strings)."""
    if fn is None or not req.stop:
        return None
    right = package_step(_copy(req), list(drafts), list(targets))
    if got == right or not any(_char_tail_step(req, drafts, targets, w) == got for w in _windows(req)):
        return None
    if not cuts_characters(fn):
        return None
    where = _where(req, right) or (
        "A stop string ended inside the newest token, whose text runs on past it by more characters than the margin"
    )
    return CHAR_TAIL.format(where=where, stop=PROBE_STOP, short=SHORT, long=LONG), CHAR_TAIL_HINT


def char_tail_hint(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> Optional[str]:
    """char_tail_class's message and hint for the generated phase (the answer called here; None when it
    raises or does not cut its tail in characters)."""
    if fn is None or not req.stop:
        return None
    try:
        got = _call(fn, _copy(req), list(drafts), list(targets))
    except Exception:
        return None
    named = char_tail_class(fn, req, drafts, targets, got)
    return f"{named[0]} ({named[1]})" if named else None
