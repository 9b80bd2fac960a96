"""Exercise 3: stop strings are literal text. The client's stop=['.'] ends the answer at the first
dot; an answer that looks for stop strings with re.search(s, text) (or re.compile, re.finditer)
reads them as regular expressions: '.' matches any character, so 'Wait... what?' is cut before
its 'W', and 't.' matches 't ' in 'a cat sat.'; a stop string such as '(' or '?' is no pattern at
all, and re raises re.error.

`check_literal_stops` plays two texts whose stop string holds a '.', and names the mistake only
when, on both, the answer's text ends exactly where the stop string read as a pattern first
matches, which is not where it first occurs as written; and a third whose stop string is '(',
where re.error (raised by the answer, the one thing that raises it) names it too. The hand case
"stop string inside a token" runs it before its '.' play.
"""

from __future__ import annotations

import re

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

LITERAL = "stop strings are literal text: use str.find, not re (a '.' in a stop string is a dot)"

# (text, stop strings): each stop string matches earlier as a pattern than as written
DOT_PLAYS = [("Wait... what?", ["."]), ("a cat sat. ok", ["t."])]
NO_PATTERN = ("f(x) = 1", ["("])  # re.compile('(') raises re.error


def pattern_cut(text: str, stop: list[str]) -> str:
    """The text cut before the first match of any stop string read as a regular expression."""
    starts = [m.start() for s in stop if (m := re.search(s, text))]
    return text[: min(starts)] if starts else text


def literal_cut(text: str, stop: list[str]) -> str:
    """The text cut before the first occurrence of any stop string as written (the contract)."""
    starts = [i for s in stop if (i := text.find(s)) >= 0]
    return text[: min(starts)] if starts else text


def _joined(cls, text: str, stop: list[str]) -> str | None:
    """What the answer's pieces join to on `text`; None where it fails in another way (the hand
    case's own checks then say how). re.error is the answer reading a stop string as a pattern."""
    tok = tokenizer()
    try:
        return "".join(pieces_of(cls(tok, list(stop)), tok.encode(text)))
    except re.error as e:
        raise Mistake(
            f"stop={stop!r} on the text {text!r}: your class raised re.error ({e}). Only a regular expression "
            f"can fail to compile: {stop[0]!r} was read as a pattern, but a stop string is text to find as "
            f"written, and the answer here is {literal_cut(text, stop)!r}",
            LITERAL,
        ) from None
    except Exception:
        return None


def check_literal_stops(cls) -> None:
    """Name stop strings read as regular expressions: re.error on '(' or, on both '.' plays, the
    text cut where the pattern matches instead of where the stop string stands."""
    dots = [(text, stop, _joined(cls, text, stop)) for text, stop in DOT_PLAYS]
    if all(joined == pattern_cut(text, stop) != literal_cut(text, stop) for text, stop, joined in dots):
        said = "; ".join(
            f"on {text!r} with stop={stop!r} your text is {joined!r}, cut where the pattern {stop[0]!r} matches "
            f"{text[len(joined) : len(joined) + len(stop[0])]!r}, but {stop[0]!r} as written first stands at "
            f"character {text.find(stop[0])} (expected {literal_cut(text, stop)!r})"
            for text, stop, joined in dots
        )
        raise Mistake(
            f"{said}. The stop strings were matched as regular expressions, where '.' is any character",
            LITERAL,
        )
    _joined(cls, *NO_PATTERN)
