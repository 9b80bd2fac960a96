"""Exercise 3: a stop string of whitespace only, such as ' ' or '\\n\\n' (a paragraph break).

It is a stop string like any other: only '' is none (every text would begin with it). An answer
that filters the stop list with `if s.strip()` (meant to drop empty ones), `s.isspace()` or the
like drops these too, so its text runs on past them, as if they were not in the list.

Both phases name that mistake, each from what it has:

* the hand cases (`check_whitespace_kept`) see the answer ignore a whitespace-only stop string,
  then probe it on 'one two': it cuts at the stop string ' t' but not at ' ', which the same token
  ' two' completes, so the only thing ' ' lacks is a character that is not whitespace;
* the generated phase (`dropped_whitespace`) has only the pieces: they are exactly the package's
  detokenizer's with the whitespace-only stop strings left out of the list (`whitespace_dropped`),
  and not the package's own.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, pieces_of
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

WHITESPACE = (
    "a stop string may be whitespace only (' ', '\\n\\n' for a paragraph break), and it is a stop string like any "
    "other: drop only the empty string '' from the list (`if s`), not those that strip to '' (`if s.strip()`)"
)
# Per play: the text, its stop list, the answer. The space ends inside the token ' two'; the
# paragraph break is two tokens, '\n' and '\n'.
WHITESPACE_PLAYS = [
    ("Dear Bob,\n\nThanks", ["\n\n"], "Dear Bob,"),
    ("one two three four", [" "], "one"),
]


class whitespace_dropped(reference):
    """The package's detokenizer with one mistake: stop strings of whitespace only are dropped
    from the list (`if s.strip()`), so the text runs on past them."""

    def __init__(self, tokenizer, stop=()) -> None:
        super().__init__(tokenizer, [s for s in stop if s.strip()])


def _pieces(cls, ids: list[int], stop: list[str]) -> list[str]:
    return pieces_of(cls(tokenizer(), list(stop)), ids)


def dropped_whitespace(ids: list[int], stop: list[str], pieces: list[str]) -> bool:
    """The pieces are those of the package's detokenizer with the whitespace-only stop strings left
    out of `stop`, and they differ from the package's own (generated phase)."""
    if not any(s and not s.strip() for s in stop):
        return False
    return pieces == _pieces(whitespace_dropped, ids, stop) != _pieces(reference, ids, stop)


def _ignores_whitespace_only(cls) -> bool:
    """On 'one two' the answer cuts at ' t' but not at ' ': both end inside the token ' two'."""
    ids = tokenizer().encode("one two")
    assert [_full([t]) for t in ids] == ["one", " two"], "setup: 'one two' must be two tokens"
    return "".join(_pieces(cls, ids, [" t"])) == "one" and "".join(_pieces(cls, ids, [" "])) == "one two"


def check_whitespace_kept(cls, pieces: list[str], text: str, stop: list[str]) -> None:
    """Where the answer showed all of `text` although a whitespace-only stop string of `stop` is in
    it, and the probe shows it ignores whitespace-only stop strings, name that mistake."""
    joined, blank = "".join(pieces), [s for s in stop if s and not s.strip() and s in text]
    if blank and joined == _full(tokenizer().encode(text)) and _ignores_whitespace_only(cls):
        raise Mistake(
            f"stop={stop!r}: your pieces {pieces!r} join to {joined!r}, the whole text, although the stop string "
            f"{blank[0]!r} is in it. A stop string of whitespace only is still a stop string: with stop=[' t'] your "
            "answer cut 'one two' to 'one', with stop=[' '] it showed all of it, so it left ' ' out of the list",
            WHITESPACE,
        )
