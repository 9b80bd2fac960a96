"""Exercise 3 and its stretch: text released by finish() is searched for stop strings like add()'s.

A request cut by max_tokens inside a character leaves tokens that finish() decodes and releases
(their '\\ufffd' included). That text can complete a stop string begun in text already returned:
'one two.' then the first two byte tokens of ' 🚀', with stop='. ', decode to 'one two. \\ufffd',
and the answer ends right after '. ' (with include_stop_str_in_output) or right before it (the base
part, where the '.' is held back until then). An answer whose finish() returns the flushed text
without searching it shows what comes after the stop string, or the stop string itself; one that
never flushes them (with the flag set) loses the text, and is named before any cut is blamed.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, _full, check_joined_to, pieces_of
from minisgl_edu.grading.detokenizer.kept_at_token_end import kept_only_at_a_token_end
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.detokenizer.one_character_start import check_one_character_start
from minisgl_edu.grading.detokenizer.one_past import cut_one_past
from minisgl_edu.grading.harness import tokenizer

NOT_SEARCHED = (
    "finish() searches the text it releases for stop strings too: the tokens it flushes (cut by max_tokens "
    "inside a character) can complete a stop string that began in text already returned, so cut right after "
    "its end there, as add() does"
)
NOT_SEARCHED_BASE = (
    "finish() searches the text it releases for stop strings too: the tokens it flushes (cut by max_tokens "
    "inside a character) can complete a stop string that began in the held-back tail, so cut before it there, "
    "as add() does"
)
STOP = ". "


def _flush_scene() -> tuple[list[int], str]:
    """'one two.' then the first two byte tokens of ' 🚀' (cut by max_tokens), and their full decode."""
    ids = tokenizer().encode("one two. 🚀")[:-1]  # 'one', ' two', '.', ' \xf0', then one more byte token
    full = _full(ids)
    assert full.startswith("one two. ") and full.endswith(REPLACEMENT), "setup: the flush must complete '. '"
    assert _full(ids[:3]) == "one two.", "setup: '.' must come before the unfinished tokens"
    return ids, full


def check_final_flush_cut(cls) -> None:
    """The base part: '.' is held back as the start of '. ', and the flush completes it: the answer
    is 'one two', and finish() must not show the stop string."""
    ids, full = _flush_scene()
    pieces = pieces_of(cls(tokenizer(), [STOP]), ids)
    before, joined = "".join(pieces[:-1]), "".join(pieces)
    if "one two".startswith(before) and STOP in pieces[-1]:
        raise Mistake(
            f"stop=[{STOP!r}]: the request ended (max_tokens) inside '🚀', after your add()s had returned "
            f"{before!r}; finish() returned {pieces[-1]!r}, so the answer reads {joined!r}, expected 'one two'. "
            f"The unfinished tokens decode to {full[len('one two.') :]!r}, whose space completes {STOP!r} with the "
            "held-back '.': finish() did not search the text it released, and showed the stop string",
            NOT_SEARCHED_BASE,
        )
    if joined != "one two":
        check_one_character_start(cls)  # the '.' shown at once, so the flush's ' ' completes no '. ' unsent
    check_joined_to(pieces, "one two", f"stop=[{STOP!r}]: the pieces")


UNFINISHED_WITH_FLAG = (
    "finish() returns what is still held back, whole or not, with include_stop_str_in_output set too: the tokens "
    "of a character left unfinished when the request ends (max_tokens can cut it) decode to '\\ufffd', and that "
    "text is part of the answer"
)


def check_unfinished_flushed(cls) -> None:
    """With the flag set and no stop string, a stream cut by max_tokens inside '🚀' (two of its three
    byte tokens): the pieces must join to the decode of every token. An answer whose pieces lack exactly
    the unfinished tokens' text never flushed them, whatever else its finish() does."""
    ids = tokenizer().encode("one two 🚀")[:-1]  # 'one', ' two', then two of the rocket's byte tokens
    full, done = _full(ids), _full(ids[:2])
    assert full.endswith(REPLACEMENT) and full.startswith(done), "setup: the stream must end inside a character"
    pieces = _stream(cls, ids, [], True)
    if "".join(pieces) == done:
        raise Mistake(
            f"include_stop_str_in_output=True, no stop string: the request ended (max_tokens) after two of the "
            f"three byte tokens of '🚀', and your pieces {pieces!r} join to {done!r}, expected {full!r}: finish() "
            f"left out {full[len(done) :]!r}, the text of the tokens that never completed a character",
            UNFINISHED_WITH_FLAG,
        )


def check_final_flush_searched(cls, judge) -> None:
    """The same scene with the flag set; `judge` (include_stop.py's) checks the pieces when the
    final flush is not what went wrong. Where they differ, an answer that never flushes the
    unfinished tokens is named first (`check_unfinished_flushed`)."""
    ids, full = _flush_scene()
    expected = "one two. "
    pieces = _stream(cls, ids, [STOP], True)
    if "".join(pieces) != expected:
        check_unfinished_flushed(cls)
    before, last = "".join(pieces[:-1]), pieces[-1]
    if expected.startswith(before) and (before + last).startswith(expected) and len(before + last) > len(expected):
        said = f"stop=[{STOP!r}], include_stop_str_in_output=True: the answer reads {before + last!r}"
        # it searched, found '. ' going on into ' \ufffd', and fell back to the base rule's search
        # (or it searched, found '. ' and cut one character past it, showing the '\ufffd')
        raise (
            kept_only_at_a_token_end(cls, f"{said}, expected {expected!r}")
            or cut_one_past(cls, before + last, expected, f"{said}, expected {expected!r}")
        ) or Mistake(
            f"stop=[{STOP!r}], include_stop_str_in_output=True: the request ended (max_tokens) inside '🚀', after "
            f"your add()s had returned {before!r}; finish() returned {last!r}, so the answer reads "
            f"{before + last!r}, expected {expected!r}. The unfinished tokens decode to {full[len('one two.') :]!r}, "
            f"whose space completes {STOP!r}, begun by the '.' before them: finish() did not search the text it "
            f"released, and showed {(before + last)[len(expected) :]!r} after the stop string",
            NOT_SEARCHED,
        )
    judge(pieces, ids, [STOP], True, expected, cls)
