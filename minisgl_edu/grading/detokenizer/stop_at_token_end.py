"""Exercise 3's stretch: with the flag set, a stop string that ends exactly where the decoded text
ends (at the end of a token) stops the stream as surely as one that ends inside a token.

An answer that marks the stream stopped only when the cut dropped text after the stop string
(`self.stopped = bool(ends) and end < len(decoded)`) returns the whole stop string with that token,
as it should, but goes on streaming: its next search begins past the stop string's start, so the
text of the following tokens is shown too.

`stopped_only_when_cut` reads that from the pieces (they joined to the answer after the token that
completed the stop string, that token's text ending with it, and later pieces gave more), then
probes the answer on 'one two three' (tokens 'one', ' two', ' three'): it stops at 'tw', which ends
inside ' two', but not at 'two', which ends with it.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _complete_prefix, _full, pieces_of
from minisgl_edu.grading.harness import tokenizer

STOPPED_AT_TOKEN_END = (
    "a stop string found is the end of the answer, also when it ends exactly at the end of the decoded text: "
    "set self.stopped = True whenever the search finds one, not only when text after it was cut"
)
PROBE = ("one two three", ["one", " two", " three"], {"tw": "one tw", "two": "one two three"})


def _went_on_after_a_stop_at_the_end(pieces: list[str], ids: list[int], expected: str) -> int:
    """The number of add() calls after which the pieces joined to the answer, which is all the text
    decoded so far (the stop string ended with that token), while later pieces still gave more; else 0."""
    full = _full(ids)
    for m in range(1, len(pieces)):
        joined = "".join(pieces[:m])
        if joined == expected == _complete_prefix(ids, m, full) and "".join(pieces[m:]):
            return m
    return 0


def _stops_only_when_cut(cls) -> bool:
    """On PROBE's text the answer stops at the stop string that ends inside a token and runs on past
    the one that ends with a token."""
    text, tokens, kept = PROBE
    ids = tokenizer().encode(text)
    assert [tokenizer().decode([t]) for t in ids] == tokens, f"setup: {text!r} must be the tokens {tokens}"
    for stop, joined in kept.items():
        try:
            pieces = pieces_of(cls(tokenizer(), [stop], True), ids)
        except Exception:
            return False
        if "".join(pieces) != joined:
            return False
    return True


def stopped_only_when_cut(pieces: list[str], ids: list[int], expected: str, leaked: str, cls) -> Mistake | None:
    """The STOPPED_AT_TOKEN_END mistake, its message led by `leaked` (what the case saw), when the
    pieces went on after a stop string that ended with its token and the probe shows the answer
    stops only where it cut text; else None."""
    m = _went_on_after_a_stop_at_the_end(pieces, ids, expected)
    if not m or cls is None or not _stops_only_when_cut(cls):
        return None
    return Mistake(
        f"{leaked}. After token {m} the decoded text ended exactly at the end of the stop string, and your add() "
        f"had returned the whole answer {expected!r}, but the stream went on. On 'one two three' your "
        "answer stops at 'tw', which ends inside ' two', but runs on past 'two', which ends with it: you mark "
        "the stream stopped only when the cut dropped text after the stop string",
        STOPPED_AT_TOKEN_END,
    )
