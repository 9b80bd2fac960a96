"""Exercise 3: a token decoded without the token before it as context.

The class is built with whatever tokenizer the engine serves. SmolLM2's byte-level BPE decodes a
token alone with its leading space (' two'), so decoding each new token on its own looks right on
it. A SentencePiece tokenizer (Llama, Mistral) drops the leading space of the first token it is
given ('▁two' alone decodes to 'two'); only a decode that starts one token back keeps it. These
plays run the answer with `SentencePieceLike`, the bundled tokenizer with that one change to its
decode, and name a lost leading space: in add() (plain text) and in finish() (the tokens of a
character cut by max_tokens, flushed at the end).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, pieces_of
from minisgl_edu.grading.harness import tokenizer

SENTENCEPIECE = (
    "a SentencePiece tokenizer (Llama, Mistral) drops a token's leading space when the token is decoded alone"
)
LOST_IN_ADD = (
    "a leading space was lost: decode the new tokens together with the token before them (ids[window:]) and keep "
    "the text after what ids[window:read] gave; " + SENTENCEPIECE
)
LOST_IN_FINISH = (
    "a leading space was lost in finish(): decode the unfinished tokens together with the token before them "
    "(ids[window:]) and keep the text after what ids[window:read] gave; " + SENTENCEPIECE
)


class SentencePieceLike:
    """The bundled tokenizer, decoding as SentencePiece does: one leading space of the first token's
    text is dropped, while the later tokens of a longer run keep theirs."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def decode(self, ids, **kwargs) -> str:
        text = self._inner.decode(ids, **kwargs)
        return text[1:] if text.startswith(" ") else text

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _lost_space(joined: str, full: str) -> int:
    """Where `joined` first lacks a space of `full`, when spaces are all it lacks; else -1."""
    if len(joined) >= len(full) or joined.replace(" ", "") != full.replace(" ", ""):
        return -1
    k = 0
    while k < len(joined) and joined[k] == full[k]:
        k += 1
    return k if full[k] == " " else -1


def _play(cls, ids: list[int]) -> tuple[list[str], str, int]:
    """The answer's pieces with the SentencePiece-like tokenizer, the text they must join to, and
    where a space of it is missing (-1 if none is)."""
    sp = SentencePieceLike(tokenizer())
    pieces = pieces_of(cls(sp, []), ids)
    full = sp.decode(ids, skip_special_tokens=True)
    return pieces, full, _lost_space("".join(pieces), full)


def _token_at(ids: list[int], k: int) -> int:
    """The index of the token whose text begins at character k of the full decode."""
    tok = tokenizer()
    return next(i for i in range(len(ids)) if len(tok.decode(ids[:i], skip_special_tokens=True)) >= k)


def check_context_in_add(cls) -> None:
    """'one two three four' with the SentencePiece-like tokenizer: every word after the first keeps
    its space only when add() decodes the new token together with the one before it."""
    ids = tokenizer().encode("one two three four")
    pieces, full, k = _play(cls, ids)
    if k < 0:
        return
    i = _token_at(ids, k)
    word = tokenizer().decode(ids[i : i + 1])
    raise Mistake(
        f"with a SentencePiece-style tokenizer (its decode drops the leading space of the first token it is given, "
        f"as Llama's and Mistral's do) your pieces {pieces!r} join to {''.join(pieces)!r}, expected {full!r}: the "
        f"space of token {i + 1} ({word!r}) was lost, so that token was decoded without the token before it",
        LOST_IN_ADD,
    )


def check_context_in_finish(cls) -> None:
    """'one two 🚀' cut by max_tokens after two of the rocket's three byte tokens, the first of them
    ' \\xf0' (with the space): finish() decodes them, and keeps the space only with the token before."""
    ids = tokenizer().encode("one two 🚀")[:-1]
    pieces, full, k = _play(cls, ids)
    assert full.endswith(REPLACEMENT) and full.startswith("one two "), "setup: the stream must end inside a character"
    if k < 0 or k < len("".join(pieces[:-1])):
        return
    raise Mistake(
        f"with a SentencePiece-style tokenizer (its decode drops the leading space of the first token it is given, "
        f"as Llama's and Mistral's do) your pieces {pieces!r} join to {''.join(pieces)!r}, expected {full!r}: the "
        f"request ended inside '🚀', and finish() returned {pieces[-1]!r}, without the space before it: it decoded "
        "the unfinished tokens without the token before them",
        LOST_IN_FINISH,
    )
