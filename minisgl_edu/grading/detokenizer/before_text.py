"""Exercise 3: the text add() compares the new decode with must be the text already taken.

add() finds the new text by decoding the window twice: `before`, the ids already taken into the
output (ids[window:read]), and `now`, the window with the newest token. While a character's bytes
span tokens, the tokens after `read` are still unfinished. An answer whose `before` takes them in
(everything but the newest token, or a read offset moved past them) compares 'x\\ufffd' with 'x北' when
the last byte arrives: the same length, so the character is never seen as new and is lost.

A lost character has two causes that look the same in the joined pieces: the window moved on past the
unfinished tokens, or the window stayed but the text compared with holds them. `check_before_text`
plays the answer with a tokenizer that records every decode() and, at the add() that completes a
character of two or more tokens, tells the second cause from the first: the decode window starts
where it started when the character began, yet no decode ends at the read offset of that moment.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, _full
from minisgl_edu.grading.harness import tokenizer

BEFORE_TEXT = (
    "the text you compare the new decode with (before) must be the text already taken, decode(ids[window:read]) "
    "with read just past the last token that completed a character: not everything but the newest token, "
    "which still holds the first bytes of a character being cut, so its completion looks like no new text"
)


class _RecordingTokenizer:
    """The real tokenizer, with every decode() call's ids written down for the current add()."""

    def __init__(self, tok) -> None:
        self._tok = tok
        self.calls: list[list[int]] = []

    def decode(self, ids, *args, **kwargs):
        self.calls.append([int(i) for i in ids])
        return self._tok.decode(ids, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tok, name)


def _ranges(calls: list[list[int]], ids: list[int], n: int) -> list[tuple[int, int]]:
    """Each non-empty decode call of the add() of token n as (start, end) in ids[: n + 1], the latest
    slice that matches it; calls that are no slice of the ids are left out."""
    out = []
    for call in calls:
        ends = [b for b in range(len(call), n + 2) if ids[b - len(call) : b] == call] if call else []
        if ends:
            out.append((ends[-1] - len(call), ends[-1]))
    return out


def _completions(ids: list[int]) -> list[tuple[int, int]]:
    """(j, k) for each run of tokens j .. k - 1 whose decode ends in '\\ufffd' and token k after them, whose
    decode does not (j >= 1): token k completes a character, or follows a byte that no token completes."""
    out, j = [], None
    for k in range(len(ids)):
        if _full(ids[: k + 1]).endswith(REPLACEMENT):
            j = k if j is None else j
        elif j is not None:
            if j >= 1 and k > j:
                out.append((j, k))
            j = None
    return out


def _decodes_per_add(cls, ids: list[int]) -> Optional[list[list[tuple[int, int]]]]:
    """The decode ranges of each add(), or None when the answer stops with an error."""
    rec = _RecordingTokenizer(tokenizer())
    try:
        detok = cls(rec, [])
        per_add = []
        for n, t in enumerate(ids):
            rec.calls = []
            detok.add(t)
            per_add.append(_ranges(rec.calls, ids, n))
    except Exception:
        return None
    return per_add


def check_before_text(cls, ids: list[int]) -> None:
    """Raise the BEFORE_TEXT mistake when, at the add() that completes a character of several tokens,
    the answer's decodes start where they started at its first token (the window did not move on) but
    none ends at that token (the text already taken), while one ends at the newest token."""
    per_add = _decodes_per_add(cls, ids)
    if per_add is None:
        return
    for j, k in _completions(ids):
        starts_then = {a for a, _ in per_add[j]}
        at_k = per_add[k]
        if not at_k or not {a for a, _ in at_k} <= starts_then:
            continue  # the window moved on past the unfinished tokens: another mistake
        ends = {b for _, b in at_k}
        if j in ends or k + 1 not in ends:
            continue
        others = sorted(b for b in ends if b != k + 1)
        compared = f"ends at token {others[-1]}, past token {j}" if others else f"was not decoded up to token {j}"
        what = ", ".join(f"decode(ids[{a}:{b}]) = {_full(ids[a:b])!r}" for a, b in sorted(set(at_k)))
        if _full(ids[: k + 1]).count(REPLACEMENT) == _full(ids[:j]).count(REPLACEMENT):
            event = (
                f"token {k + 1} completes {_full(ids[: k + 1])[-1]!r}, a character whose bytes began at token {j + 1}"
            )
        else:
            event = f"token {k + 1} follows a byte that is no character (token {j + 1}, '\\ufffd' in the text for good)"
        raise Mistake(
            f"{event}. "
            f"Your add() then decoded {what}: the window did not move on, but the text compared with the new "
            f"decode {compared}, the last token that completed a character, so it holds the unfinished bytes "
            "('\\ufffd') and what they decode to never counts as new text: it is lost",
            BEFORE_TEXT,
        )
