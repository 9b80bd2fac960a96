"""Exercise 3's stretch: with the flag set, the stop string stays in the answer wherever it ends,
also in the middle of a token.

An answer that keeps the stop string only when it ends where the decoded text ends, and otherwise
falls back to the base rule ("a token cannot be shown in part") cuts BEFORE the stop string whenever
the token that completes it carries text past it (' welcome' completing 'welc'): the stop string
is lost, and where it began in text already returned, the base rule's search (from the text not
yet returned) misses it and the text after it leaks.

`kept_only_at_a_token_end` probes the answer on 'one two three' (tokens 'one', ' two', ' three'):
it keeps 'two', which ends with the token ' two', but drops 'tw', which ends inside it.
include_stop.py and final_flush.py ask it where the stop string went missing or text after it leaked.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

KEPT_ONLY_AT_TOKEN_END = (
    "with the flag set, keep the stop string also when the token that completes it goes on past it: cut right "
    "after its end, in the middle of the token, and never fall back to cutting before it"
)
PROBE = ("one two three", ["one", " two", " three"], {"two": "one two", "tw": "one "})


def _keeps_only_at_a_token_end(cls) -> bool:
    """On PROBE's text the answer keeps the stop string that ends with a token and cuts before the
    one that ends inside it."""
    text, tokens, joined = PROBE
    ids = tokenizer().encode(text)
    assert [tokenizer().decode([t]) for t in ids] == tokens, f"setup: {text!r} must be the tokens {tokens}"
    try:
        return all("".join(pieces_of(cls(tokenizer(), [s], True), ids)) == j for s, j in joined.items())
    except Exception:
        return False


def kept_only_at_a_token_end(cls, said: str) -> Mistake | None:
    """The KEPT_ONLY_AT_TOKEN_END mistake, its message led by `said` (what the case saw), when the
    probe shows it; else None."""
    if cls is None or not _keeps_only_at_a_token_end(cls):
        return None
    return Mistake(
        f"{said}. On 'one two three' with include_stop_str_in_output=True your answer keeps 'two', which ends "
        "with the token ' two', but with stop=['tw'] it returns 'one ': where the token goes on past the stop "
        "string you cut before it, as the base part does, so the stop string is lost (and one that began in "
        "text already returned is not found again, so the text after it leaks)",
        KEPT_ONLY_AT_TOKEN_END,
    )
