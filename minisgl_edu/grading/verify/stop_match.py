"""Exercise 8: a stop string looked for in the decoded tail with a test other than `s in tail`.

Two ways, each read from the answer itself on small steps of its own:

- `tail.find(s) > 0`: find() gives -1 when s is absent and 0 when s starts the text, so a stop string
  at the very start of the decoded tail (an output still shorter than the tail, whose text begins
  with it) counts as absent. Shown by 'go now' at the start of the text 'go now' (missed) beside
  'one two' one character in (found). Stripping the tail looks alike on ' one two' (stripped.py), so
  this is tried first, on a stop string with no whitespace at its ends.
- the stop strings read as regular expressions (`re.search("|".join(req.stop), tail)`, no
  re.escape): '1+2' then misses the text '1+2' and matches the text '12'. A stop string is plain
  text, whatever characters it is made of. With ignored end ids inside '1+2' this looks like a tail
  too short (the window margin), so it is tried before the window's diagnoses.
- `tail.endswith(s)`: a token can carry more text than the stop string, so a stop string may end
  inside the newest token with text after it in that same token. Shown by 'two three' that ends the
  text (found) beside 'two three ' completed by the leading space of ' ok' (missed).

Each is named only when the answer's result on the failing step is also the one that test gives (the
step played again with it), so a hint never names a mistake the answer did not make.
"""

from __future__ import annotations

import re
from typing import Optional

from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.verify.one_change import changed_step
from minisgl_edu.grading.verify.requests import _call, _copy, _req, _w
from minisgl_edu.scheduler.verify_step import VerifyRequest
from minisgl_edu.scheduler.verify_step import verify_step as package_step

AT_START = (
    "a stop string at the very start of the decoded tail was missed: find() returns 0 there, which is a match "
    "(only -1 means absent), so find(s) > 0 counts a stop string that begins the text as absent (an output "
    "still shorter than the tail whose text begins with it, 'go now' in 'go now'). Test s in tail, or find(s) "
    ">= 0"
)
AT_START_HINT = (
    "a stop string at the very start of the decoded tail counts too: find() returns 0 there, a match (-1 "
    "means absent); test s in tail, or find(s) >= 0"
)
PATTERN = (
    "the stop strings were read as regular expressions (re.search on them, without re.escape): a stop string is "
    "plain text, so '1+2' must match the text '1+2', which the pattern '1+2' does not (it matches '12' or '112'), "
    "and '.', '?' or '(' misbehave or raise. Test any(s in tail for s in req.stop), or re.escape each string"
)
PATTERN_HINT = (
    "a stop string is plain text, not a pattern: test any(s in tail for s in req.stop), or re.escape each "
    "stop string before re.search"
)

AT_END = (
    "the stop string was looked for only at the end of the decoded tail (endswith): a token can carry more text "
    "than the stop string, so a stop string may end inside the newest token with text after it in that same "
    "token ('two three ' completed by the leading space of ' ok'). Look for it anywhere in the tail: "
    "any(s in tail for s in req.stop)"
)
AT_END_HINT = (
    "a stop string may end inside the newest token, with text after it: look for it anywhere in the tail, not "
    "endswith (s in tail)"
)


def _after_start(text: str, stop: list[str]) -> bool:
    return any(text.find(s) > 0 for s in stop)


def _as_pattern(text: str, stop: list[str]) -> bool:
    return re.search("|".join(stop), text) is not None  # re.error for some strings: the caller's to catch


def _at_end(text: str, stop: list[str]) -> bool:
    return any(text.endswith(s) for s in stop)


def _stops(fn, output: list[int], run: list[int], stop: str) -> Optional[bool]:
    """Whether the answer ends the run with 'stop' on its last accepted draft (the model's ' five'
    follows and is cut), after `output`, with the one stop string `stop`; None when it raises."""
    try:
        got = _call(fn, _req(output, len(run), stop=(stop,)), run, run + _w(" five"))
    except Exception:
        return None
    return got.finish_reason == "stop" and got.tokens == run


def misses_at_start(fn) -> bool:
    """The answer misses 'go now' that begins the text 'go now', and finds 'one two' one character into
    ' one two' (so it does find stop strings that do not start the tail)."""
    go, now = tokenizer().encode("go now")
    return _stops(fn, [go], [now], "go now") is False and _stops(fn, _w(" one"), _w(" two"), "one two") is True


def reads_patterns(fn) -> bool:
    """The answer misses '1+2' in the text 'x 1+2' and finds it in 'x 12' (where the pattern matches)."""
    x, space, one, plus, two = tokenizer().encode("x 1+2")
    plain = _stops(fn, [x, space], [one, plus, two], "1+2")
    return plain is False and _stops(fn, [x, space], [one, two], "1+2") is True


def ends_only(fn) -> bool:
    """The answer finds 'two three' that ends the text ' one two three', and misses 'two three ' completed by
    the leading space of ' ok' (the text goes on after it inside that token)."""
    run = _w(" two", " three")
    return (
        _stops(fn, _w(" one"), run, "two three") is True
        and _stops(fn, _w(" one"), run + _w(" ok"), "two three ") is False
    )


# (message, hint, the test written that way, the probe that shows the answer makes it), in the order tried
WAYS = [
    (AT_START, AT_START_HINT, _after_start, misses_at_start),
    (PATTERN, PATTERN_HINT, _as_pattern, reads_patterns),
    (AT_END, AT_END_HINT, _at_end, ends_only),
]


def match_class(fn, req: VerifyRequest, drafts: list[int], targets: list[int], got) -> Optional[tuple[str, str]]:
    """(message, hint) of the way of matching the answer shows, when its result `got` on this step is the
    one that way gives (and not the right one) and its probes confirm it; None otherwise."""
    if fn is None or not req.stop:
        return None
    right = package_step(_copy(req), list(drafts), list(targets))
    for text, hint, found, probe in WAYS:
        try:
            mistaken = changed_step(req, drafts, targets, found=found)
        except re.error:
            continue
        if mistaken == got != right and probe(fn):
            return text, hint
    return None


def match_hint(fn, req: VerifyRequest, drafts: list[int], targets: list[int]) -> Optional[str]:
    """match_class's message and hint for the generated phase (the answer called here; None when it
    raises or shows neither way)."""
    if fn is None or not req.stop:
        return None
    try:
        got = _call(fn, _copy(req), list(drafts), list(targets))
    except Exception:
        return None
    named = match_class(fn, req, drafts, targets, got)
    return f"{named[0]} ({named[1]})" if named else None
