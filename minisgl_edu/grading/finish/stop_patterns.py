"""A diagnosis for exercise 1: the stop strings searched as regular expressions (re.search(s, tail),
re.match, a pattern joined from the list) instead of as plain text. A stop string is text the client
typed: '1+2', '2 =?', '.' or '**' hold characters that a pattern reads as operators, so the search
misses the text itself ('1+2' as a pattern is one or more '1' then '2'), finds text that is not there
('.' is any character), or raises re.error ('+' alone repeats nothing).

It is named only where both hold: the grader's own test says that reading a stop string of this
request as a pattern gives another answer than reading it as text (`_pattern_differs`), and a probe
of the answer on requests of its own shows that it reads stop strings so (`reads_as_pattern`). An
re.error from the answer is that mistake too: the reference never compiles a pattern. The hand cases
(expect.py) and the generated phase (scenes.py) use it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.finish.tokens import EOS, _decode, _ids, _req

AS_PATTERN = (
    "a stop string is plain text, not a pattern: test `s in tail`. re.search(s, tail) reads '+', '.', '?', '*' "
    "or '(' in a stop string as regex operators, so '1+2' never matches the text '1+2' (it matches '112' "
    "instead), '.' matches any character, and '+' alone raises re.error"
)


def _pattern_differs(stop: str, text: str) -> bool:
    """The grader's own test: `stop` read as a regex pattern finds something else in `text` than `stop`
    read as text, or is no pattern at all (it does not compile)."""
    try:
        return bool(re.search(stop, text)) != (stop in text)
    except re.error:
        return True


def reads_as_pattern(fn: Any, *extra: Any) -> str:
    """What the answer does that only a pattern search does: it raises re.error for the stop string '+',
    or it misses '1+2' in the output 'x 1+2' yet finds it in 'x 112', which holds the pattern (one or
    more '1', then '2') but not the text. '' when it does neither."""
    try:
        fn(_req(_ids("x 1+2"), stop=["+"]), set(EOS), _decode, *extra)
    except re.error as e:
        return f"for the stop string '+' your check raises re.error ({e})"
    except Exception:
        pass
    try:
        missed = fn(_req(_ids("x 1+2"), stop=["1+2"]), set(EOS), _decode, *extra) in (None, "length")
        if missed and fn(_req(_ids("x 112"), stop=["1+2"]), set(EOS), _decode, *extra) == "stop":
            return "your check misses the stop string '1+2' in the output 'x 1+2', yet finds it in 'x 112'"
    except Exception:
        pass
    return ""


def searched_as_pattern(fn: Any, stop: list[str], text: str, *extra: Any) -> Optional[tuple[str, str]]:
    """(sentence, hint) where a stop string of `stop` reads otherwise as a pattern than as text on
    `text` (the output's decoded text) and the answer reads stop strings as patterns; None otherwise."""
    differs = [s for s in stop if _pattern_differs(s, text)]
    probe = reads_as_pattern(fn, *extra) if differs else ""
    if not probe:
        return None
    return (
        f"the stop string {differs[0]!r} holds characters that a regex reads as operators, and {probe}: it "
        "searches the stop strings as regex patterns",
        AS_PATTERN,
    )


def named_pattern_errors(play: Callable[[Any, Any], dict]) -> Callable[[Any, Any], dict]:
    """The generated phase's `play`, with an re.error raised by the answer reported as this mistake:
    the scene's stop strings are the only text the answer could have compiled as a pattern."""

    def played(fn: Any, scene: Any) -> dict:
        try:
            return play(fn, scene)
        except re.error as e:
            raise Mistake(
                f"your check_finish raised re.error ({e}): it compiled a stop string of stop={scene.stop!r} as a "
                "regex pattern",
                AS_PATTERN,
            ) from e

    return played
