"""Exercise 3: the tokens of a character left unfinished when the request ends, flushed by finish().

Where this sits in the course: the hand case "held-back text at finish()" (base.py). max_tokens can
cut a request after the first byte tokens of an emoji; finish() returns their text as decode gives
it, '\\ufffd' included. The request can also end on a special token right after those bytes (its EOS,
which decodes to '' with skip_special_tokens=True): finish() must flush them all the same.

An answer that tests only the newest token (`decode(ids[-1:]).endswith('\\ufffd')`) flushes them
when the bytes come last and drops them when the EOS does. It is named only when its finish() also
flushes them on two probes of its own whose newest token is a broken byte token: the bytes alone, and
the bytes, the EOS, then the first byte of another emoji. An answer that drops the bytes for another
reason (an add() that forgets them when the EOS comes) fails that second probe and is not named so.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake, expect
from minisgl_edu.grading.detokenizer.common import (
    REPLACEMENT,
    _full,
    check_joined_to,
    pieces_of,
    probe_pieces,
    repeated_at_finish,
)
from minisgl_edu.grading.harness import tokenizer

UNFINISHED_AT_FINISH = (
    "finish() returns what is still held back, whole or not: the tokens of a character left unfinished when "
    "the request ends (max_tokens can cut it) decode to '\\ufffd', and that is part of the answer"
)
NEWEST_TOKEN_ONLY = (
    "finish() flushes every token read but not yet decoded into whole characters, whatever the newest token "
    "is: a request can end on a special token (its EOS decodes to '') right after the first bytes of a "
    "character, so flush whenever tokens are left that never completed a character, not only when the newest "
    "token alone decodes to '\\ufffd'"
)


def _unfinished_ids() -> list[int]:
    """'one', ' two', then two of the three byte tokens of ' 🚀' (cut by max_tokens)."""
    ids = tokenizer().encode("one two 🚀")[:-1]
    assert _full(ids).endswith(REPLACEMENT), "setup: the stream must end inside a character"
    return ids


def check_unfinished_character(cls) -> None:
    """A stream cut by max_tokens inside a character: '🚀' is three byte tokens and only two came. The
    pieces must join to the decode of every token, the last ones' '\\ufffd' included."""
    ids = _unfinished_ids()
    full = _full(ids)
    pieces = pieces_of(cls(tokenizer(), []), ids)
    joined = "".join(pieces)
    if repeated_at_finish(pieces, full):
        check_joined_to(pieces, full)
    expect(
        joined == full,
        f"the pieces {pieces!r} join to {joined!r}, expected {full!r}: the request ended (cut by max_tokens) "
        "after two of the three byte tokens of '🚀', and finish() must return their text as decode gives it",
        UNFINISHED_AT_FINISH,
    )


def _flushes(cls, ids: list[int]) -> bool:
    """The answer's pieces on `ids` join to their whole decode (a probe that raises says no)."""
    pieces = probe_pieces(lambda: cls(tokenizer(), []), ids)
    return pieces is not None and "".join(pieces) == _full(ids)


def check_unfinished_before_eos(cls) -> None:
    """The same bytes, then the EOS: the pieces must still join to the whole decode ('one two \\ufffd').
    Where they do not, the newest-token test is named when the answer flushes the bytes whenever a
    broken byte token comes last (the bytes alone; the bytes, the EOS, then another emoji's first byte)."""
    eos = tokenizer().eos_token_id
    unfinished = _unfinished_ids()
    ids = unfinished + [eos]
    full = _full(ids)
    pieces = pieces_of(cls(tokenizer(), []), ids)
    joined = "".join(pieces)
    if joined == full:
        return
    if repeated_at_finish(pieces, full):
        check_joined_to(pieces, full)
    said = (
        f"the pieces {pieces!r} join to {joined!r}, expected {full!r}: the request ended on the EOS token (id {eos}, "
        "which decodes to '') right after two of the three byte tokens of '🚀'"
    )
    next_emoji = tokenizer().encode(" 🚀")[0]  # ' \xf0': decodes to ' \ufffd' alone
    assert _full([next_emoji]).endswith(REPLACEMENT), "setup: the last probe token must be a broken byte token"
    if _flushes(cls, unfinished) and _flushes(cls, ids + [next_emoji]):
        raise Mistake(
            f"{said}. Without the EOS your finish() returns their text, and with the first byte token of another "
            f"'🚀' after the EOS it returns it too: your finish() looks only at the newest token, here the EOS, "
            "to decide whether tokens are left unfinished",
            NEWEST_TOKEN_ONLY,
        )
    raise Mistake(f"{said}, and finish() must return their text as decode gives it", UNFINISHED_AT_FINISH)
