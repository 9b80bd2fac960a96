"""Exercise 3: stop strings are matched exactly, case included. The client asked to end on the text
it wrote: with stop=['Three Four'] the output 'one two three four five' holds no stop string, and
all of it is shown at once; with stop=['World'] the output 'Hello World, hello world' ends before
'World'. An answer that lower()s or casefold()s the text, the stop strings or both cuts or holds back
text that is a stop string only with its case changed, or misses one written with capitals.

`folded_at` reads that from where an answer's text stops: the rest of the decoded text, from there
on, begins (or is the start of) a stop string only ignoring case. The hand case "stop string across
tokens" plays the two streams above (`check_case_kept`); the generated phase (scenes.py) draws stop
strings with their case changed and names the mistake with `folded_at` too.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, _piece, pieces_of
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

CASE_SENSITIVE = (
    "stop strings are matched exactly, case included: 'three four' in the text is not the stop string "
    "'Three Four', and 'World' is the stop string 'World' wherever it stands; compare the text and the stop "
    "strings as they are (never lower() or casefold() either of them, for the search or for the hold-back)"
)


def _begins(rest: str, s: str) -> bool:
    """`rest` begins with `s`, or is a start of it (a tail held back for it)."""
    n = min(len(rest), len(s))
    return n > 0 and rest[:n] == s[:n]


def folded_at(decoded: str, shown: int, stop: list[str]) -> str:
    """The stop string that the text from character `shown` on begins (or starts) only ignoring
    case, where no stop string of the list matches it as written; '' if none."""
    rest = decoded[shown:]
    if not rest or any(_begins(rest, s) for s in stop if s):
        return ""
    return next((s for s in stop if s and _begins(rest.lower(), s.lower())), "")


def changed_case(decoded: str, shown: int, s: str) -> str:
    """In words: the text from character `shown` on is the stop string `s` (or its start) only with
    its case changed."""
    rest = decoded[shown : shown + len(s)]
    return f"{rest!r} is {'the start of ' if len(rest) < len(s) else ''}{s!r} only with its case changed"


def _check_not_cut_by_case(cls) -> None:
    """'one two three four five' with stop=['Three Four']: no stop string, so after every add() the
    answer has shown as much as the package's detokenizer, and the pieces join to the whole text."""
    tok, text, stop = tokenizer(), "one two three four five", ["Three Four"]
    ids = tok.encode(text)
    mine, ref = cls(tok, list(stop)), package_detokenizer(tok, list(stop))
    shown, ref_shown = "", ""
    for n, t in enumerate(ids):
        shown += _piece(mine.add(t), f"add({t})")
        ref_shown += ref.add(t)
        s = folded_at(_full(ids[: n + 1]), len(shown), stop) if len(shown) < len(ref_shown) else ""
        if s:
            rest = _full(ids[: n + 1])[len(shown) :]
            raise Mistake(
                f"stop={stop!r}: after token {n + 1} ({_full([t])!r}) your add() had returned {shown!r} and kept "
                f"{rest!r} back, but {changed_case(_full(ids[: n + 1]), len(shown), s)}: it is ordinary text, and "
                "goes out at once",
                CASE_SENSITIVE,
            )
    shown += _piece(mine.finish(), "finish()")
    s = folded_at(text, len(shown), stop) if len(shown) < len(text) and text.startswith(shown) else ""
    if s:
        raise Mistake(
            f"stop={stop!r}: your pieces join to {shown!r}, cut before {text[len(shown) :]!r}, but the text holds "
            f"no stop string: {changed_case(text, len(shown), s)}, so all of {text!r} is shown",
            CASE_SENSITIVE,
        )


def _check_capitals_found(cls) -> None:
    """'Hello World, hello world' with stop=['World'] ends before 'World'; the control, the same text
    and stop string in lower case, tells an answer that loses the capitals from one that never stops."""
    tok = tokenizer()
    pieces = pieces_of(cls(tok, ["World"]), tok.encode("Hello World, hello world"))
    control = pieces_of(cls(tok, ["world"]), tok.encode("hello world, hello world"))
    joined = "".join(pieces)
    if joined != "Hello " and "".join(control) == "hello ":
        raise Mistake(
            f"stop=['World']: your pieces {pieces!r} join to {joined!r}, expected 'Hello ': the text holds 'World' "
            "as written, right after 'Hello '. With the text 'hello world, hello world' and stop=['world'] you cut "
            "right, so the capitals are what you lose: the text or the stop strings are compared in another case",
            CASE_SENSITIVE,
        )


def check_case_kept(cls) -> None:
    """A stop string with its case changed is ordinary text, and one with capitals is found as written."""
    _check_not_cut_by_case(cls)
    _check_capitals_found(cls)
