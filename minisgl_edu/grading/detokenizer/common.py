"""What exercise 3's grader checks every piece with, shared by its hand-written cases and its
generated scenes: a piece is a str, the full decode it must join to, and the hints of the
contract's three rules (whole characters, hold back a possible stop string, search all the text
not yet returned).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake, expect
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

REPLACEMENT = "\ufffd"
WHOLE_CHARACTERS = "hold text back while the decoded window ends in '\\ufffd'"
SEARCH_ALL = "look for stop strings in all the text not yet returned (the held-back tail and the new text)"
HOLD_BACK = "hold back a tail that could begin a stop string"
EARLIEST_START = (
    "cut before the stop string that begins first in the text (the smallest position), even when another one "
    "ends before it"
)


def _full(ids: list[int]) -> str:
    return tokenizer().decode(ids, skip_special_tokens=True)


def _complete_prefix(ids: list[int], n: int, full: str) -> str:
    """The text of the first n tokens that is certain: up to the last of them that ends a character
    (a token that begins a character also holds what comes before it, such as a space)."""
    while n > 0 and _full(ids[:n]).endswith(REPLACEMENT):
        n -= 1
    text = _full(ids[:n])
    k = 0
    while k < min(len(text), len(full)) and text[k] == full[k]:
        k += 1
    return full[:k]


def _piece(got, what: str) -> str:
    expect(
        isinstance(got, str),
        f"{what} returned {got!r} ({type(got).__name__}); it must return a str ('' for nothing yet)",
        "add() and finish() return '' when there is nothing new to show, never None",
    )
    return got


def pieces_of(detok, ids: list[int]) -> list[str]:
    """What a detokenizer returns for each of `ids` in turn, then for finish(): each checked to be a str."""
    pieces = [_piece(detok.add(t), f"add({t})") for t in ids]
    pieces.append(_piece(detok.finish(), "finish()"))
    return pieces


def probe_pieces(make, ids: list[int]) -> list[str] | None:
    """The pieces the answer's object `make()` gives on a probe's own `ids`, or None when it raises there.
    A probe only confirms a mistake; an answer that fails on the probe's input is left to the case's checks."""
    try:
        return pieces_of(make(), ids)
    except Exception:
        return None


def text_pieces(cls, text: str, stop: list[str] = ()) -> list[str] | None:
    """`probe_pieces` of a fresh `cls(tokenizer, stop)` on the tokens of `text`."""
    return probe_pieces(lambda: cls(tokenizer(), list(stop)), tokenizer().encode(text))


FINISH_REPEATS = (
    "finish() returns only text not yet returned: the look-back token before the unfinished ones was decoded "
    "and returned already, so cut its text off what finish() decodes"
)


def repeated_at_finish(pieces: list[str], expected: str) -> str:
    """The text finish() (the last piece) returned a second time: the add()s returned the start of
    `expected`, and finish() a tail of that start followed by the rest of `expected`; '' if not so."""
    before, last = "".join(pieces[:-1]), pieces[-1] if pieces else ""
    if not before or not expected.startswith(before) or not last.endswith(expected[len(before) :]):
        return ""
    extra = last[: len(last) - (len(expected) - len(before))]
    return extra if extra and before.endswith(extra) else ""


def check_joined_to(pieces: list[str], expected: str, what: str = "the pieces") -> None:
    """The pieces join to `expected`; a finish() that repeats returned text is named as such."""
    joined = "".join(pieces)
    again = repeated_at_finish(pieces, expected) if joined != expected else ""
    if again:
        raise Mistake(
            f"{what} join to {joined!r}, expected {expected!r}: finish() returned {pieces[-1]!r}, which repeats "
            f"{again!r}, text your add() had returned already",
            FINISH_REPEATS,
        )
    assert joined == expected, f"{what} join to {joined!r}, expected {expected!r}"


def _first_to_complete(full: str, stop: list[str]) -> tuple[str, int]:
    """(stop string, end) of the stop string that ends first in `full`, or ('', -1)."""
    found = [(full.find(s) + len(s), s) for s in stop if s and s in full]
    if not found:
        return "", -1
    end, s = min(found)
    return s, end


LATER = (
    "you cut after a later occurrence of the stop string; its first occurrence ends the answer (search "
    "with str.find from where the search may begin, not str.rfind)"
)


def _at_a_later_occurrence(shown: str, full: str, stop: str) -> bool:
    """`shown` ends right after an occurrence of `stop` in `full` that is not its first."""
    first = full.find(stop) if stop else -1
    at = full.find(stop, first + 1) if first >= 0 else -1
    while at >= 0:
        if shown == full[: at + len(stop)]:
            return True
        at = full.find(stop, at + 1)
    return False


FIRST_OCCURRENCE = (
    "cut before the first occurrence of the stop string, not a later one: one token can bring it twice, so "
    "search the text not yet returned from its first character with str.find (str.rfind gives the last)"
)


def before_a_later_occurrence(joined: str, full: str, stop: list[str]) -> str:
    """The stop string that `joined` (a start of `full`) is cut right before although it holds an
    earlier occurrence of it: the text was cut at the stop string's last occurrence, not its first;
    '' if none."""
    if not full.startswith(joined):
        return ""
    return next((s for s in stop if s and s in joined and full.startswith(s, len(joined))), "")


class last_occurrence(package_detokenizer):
    """The package's detokenizer with one mistake: each stop string is found with str.rfind, its
    last occurrence in the text not yet returned, so where that text holds it twice (one token
    bringing '...' for the stop string '.') the cut comes after its first occurrence."""

    def _release(self, final: bool) -> str:
        if self.stopped:
            return ""
        hits = [i for i in (self._decoded.rfind(s, self._released) for s in self.stop) if i >= 0]
        if hits:
            end, self.stopped = min(hits), True
        elif final:
            end = len(self._decoded)
        else:
            end = len(self._decoded) - self._could_start_stop()
        out = self._decoded[self._released : end]
        self._released = end
        self.text += out
        return out
