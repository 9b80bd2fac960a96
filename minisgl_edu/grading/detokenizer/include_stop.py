"""Exercise 3, stretch — `include_stop_str_in_output`, which this engine does not have: a class
built as `StopKeepingDetokenizer(tokenizer, stop, include_stop_str_in_output)` with the base
part's `add(token_id) -> str` and `finish() -> str`.

vLLM's `SamplingParams.include_stop_str_in_output` (SGLang's `no_stop_trim` is its cousin) asks
for the stop string to stay in the answer. With the flag set, the pieces must join to the full
decode cut right AFTER the first stop string to complete in the text (where one token completes
two stop strings, the one that ends first wins, whatever the order of the list). A token often
carries text past the end of the stop string: that text is cut. With the flag unset the class
behaves exactly as the base part (cut before the stop string, nothing of it shown).

What may be shown when: never half a character, never anything after the end of the stop
string, and text is not held back for ever: after each token, at most `len(longest stop) - 1`
characters of what is decoded may still be waiting (the base part's hold-back; with the flag set
nothing needs to wait, since a possible beginning of a stop string is part of the answer either
way). The grader accepts every stream inside those bounds, so a student may hold back as in the
base part or release at once.

The grader's reference is `reference_stop_keeping` in stop_keeping.py (the package has none to copy). The
engine case runs real requests through the scheduler and replays its `DetokenizeMsg`s through the
detokenizer worker's own `DetokenizeManager`, with one object of the student's class per request.
Graded on its own score line ("detokenizer_include_stop"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Case, Mistake
from minisgl_edu.grading.detokenizer.absent_stop import check_absent_stop_read
from minisgl_edu.grading.detokenizer.argument_order import check_argument_order
from minisgl_edu.grading.detokenizer.base import _tokens_of
from minisgl_edu.grading.detokenizer.common import (
    LATER,
    REPLACEMENT,
    WHOLE_CHARACTERS,
    _at_a_later_occurrence,
    _complete_prefix,
    _first_to_complete,
    _full,
)
from minisgl_edu.grading.detokenizer.final_flush import check_final_flush_searched
from minisgl_edu.grading.detokenizer.first_to_end import ORDERS, TEXT, choice_rule, probe_choice
from minisgl_edu.grading.detokenizer.flag_as_tuple import flag_read_as_set
from minisgl_edu.grading.detokenizer.flags_apart import check_flags_apart
from minisgl_edu.grading.detokenizer.include_stop_engine import case_real_engine
from minisgl_edu.grading.detokenizer.kept_at_token_end import kept_only_at_a_token_end
from minisgl_edu.grading.detokenizer.look_back_start import skipped_near_the_start
from minisgl_edu.grading.detokenizer.missed_stop import (
    ENDS_INSIDE,
    LATE_START,
    NEGATIVE_START,
    SHORTEST_LOOK_BACK,
    SLICE_OFFSET,
    SLICE_PROBE,
    _found_only_at_the_end,
    _missed_by_a_late_start,
    _missed_by_a_negative_start,
    _missed_by_a_slice_offset,
    _missed_by_the_shortest_look_back,
    _misses_a_stop_begun_in_returned_text,
    _stream,
)
from minisgl_edu.grading.detokenizer.one_past import cut_too_far
from minisgl_edu.grading.detokenizer.paired_ends import check_paired_ends
from minisgl_edu.grading.detokenizer.read_look_back import looked_back_from_read
from minisgl_edu.grading.detokenizer.restarted_piece import restarted_at_the_stop
from minisgl_edu.grading.detokenizer.scenes import detokenizer_case
from minisgl_edu.grading.detokenizer.search_after_move import searched_after_the_move
from minisgl_edu.grading.detokenizer.sent_in_bytes import check_sent_in_bytes
from minisgl_edu.grading.detokenizer.sent_unmoved import sent_left_at_the_start
from minisgl_edu.grading.detokenizer.special_before import check_special_before, probe_ids
from minisgl_edu.grading.detokenizer.stop_at_token_end import stopped_only_when_cut
from minisgl_edu.grading.detokenizer.stop_keeping import reference_stop_keeping
from minisgl_edu.grading.detokenizer.stop_piece import cut_one_short, slice_after_the_move
from minisgl_edu.grading.detokenizer.stops_passed_on import stops_not_passed_on
from minisgl_edu.grading.detokenizer.unsent_length import skipped_when_longer
from minisgl_edu.grading.detokenizer.unset_ends_first import ends_first_unset
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

FIRST = "the first occurrence of the stop string ends the answer: str.find, from where it could begin"
LEAKED = "cut right after the end of the stop string, even in the middle of a token"
BASE_RULE = "with the flag unset, cut before the stop string, as in the base part"
MISSING = "with the flag set the answer keeps the stop string: cut right after it, not before"
SEARCH_SHOWN = (
    "a stop string may begin in text already returned: search the new text together with the last "
    "len(s) - 1 characters before it"
)
ENDS_FIRST = "the stop string that ends first in the text wins, whatever its place in the list or where it begins"
ENDS_WITH_STOP = "with the flag set the answer ends with the whole stop string: cut right after its last character"
TWICE = "once add() has returned the stop string, finish() has nothing left: move what was sent past it"
NEVER_STOPPED = (
    "once add() has cut at a stop string the answer is complete: remember that it stopped (self.stopped = "
    "True) and return '' from every later add() and from finish()"
)


def _went_on_after_the_cut(pieces: list[str], ids: list[int], expected: str) -> int:
    """The number of add() calls after which the pieces joined to the answer, cut inside the text
    decoded so far (so the stop string was found), while later pieces still gave more; else 0."""
    full = _full(ids)
    for m in range(1, len(pieces)):
        if (
            "".join(pieces[:m]) == expected
            and "".join(pieces[m:])
            and len(expected) < len(_complete_prefix(ids, m, full))
        ):
            return m
    return 0


def _judge(pieces: list[str], ids: list[int], stop: list[str], include: bool, expected: str, cls=None) -> None:
    """The pieces, add() by add(): each token's text so far is how the answer begins, whole characters
    only, and nothing held back that can no longer begin a stop string; then the pieces joined."""
    full = _full(ids)
    flag = f"include_stop_str_in_output={include}"
    where = f"(text {full!r}, stop={stop}, {flag})"
    bad = [p for p in pieces if REPLACEMENT in p]
    if bad and REPLACEMENT not in full:
        raise Mistake(
            f"a piece contains a broken character: {bad[0]!r} {where}; a character that spans tokens was shown "
            "before its last token arrived (hold text back while the decoded window ends in '\\ufffd')",
            WHOLE_CHARACTERS,
        )
    if cls is not None and "".join(pieces) != expected:
        check_special_before(lambda tok: cls(tok, [], False))  # the base part's `before` kept special tokens
        check_sent_in_bytes(cls)  # text skipped or stalled after a character of several bytes
    if include:  # cut short by a stop string that is not in the text: find's -1 taken as a position
        check_absent_stop_read(pieces, expected, where, cls)
        check_paired_ends(pieces, expected, where, cls)  # an end with another stop string's length
    winner, _ = _first_to_complete(full, stop)
    longest = max([len(s) for s in stop if s] or [1])
    shown = ""
    for n, piece in enumerate(pieces[:-1], start=1):
        before, shown = shown, shown + piece
        certain = _complete_prefix(ids, n, full)
        stop_complete = any(s and s in certain for s in stop)
        if not expected.startswith(shown):
            # a piece that repeats text first: its repeat is no other mistake's symptom
            restarted = include and (
                sent_left_at_the_start(n, before, piece, where, cls)
                or restarted_at_the_stop(n, shown, before, expected, full, winner, where, cls)
            )
            raise restarted or _not_how_it_begins(
                n, shown, before, pieces, ids, stop, include, expected, full=full, winner=winner, where=where, cls=cls
            )
        if not stop_complete and len(shown) < len(certain) - (longest - 1):
            if cls is not None:  # text held back after a special token: `before` kept it
                check_special_before(lambda tok: cls(tok, [], False))
            waiting = certain[len(shown) :]
            raise Mistake(
                f"after token {n} your add() had returned only {shown!r} and still held back {waiting!r} {where}: "
                f"no stop string can begin that far back (the longest has {longest} characters), so that text is "
                "ordinary text of the answer. Release held-back text as soon as the next tokens show it is not "
                "a stop string, not only at finish()",
                "release held-back text as soon as the next tokens show it cannot begin a stop string",
            )
    _judge_joined(pieces, ids, stop, include, expected, where, cls)


def _skipped_search(cls, said: str) -> Mistake | None:
    """A stop string the search skipped, confirmed by a probe: near the start of the answer, one longer
    than the text not yet returned, or one begun before a look-back counted in tokens (read, not sent)."""
    return skipped_near_the_start(cls, said) or skipped_when_longer(cls, said) or looked_back_from_read(cls, said)


def _not_how_it_begins(
    n: int,
    shown: str,
    before: str,
    pieces: list[str],
    ids: list[int],
    stop: list[str],
    include: bool,
    expected: str,
    *,
    full: str,
    winner: str,
    where: str,
    cls,
) -> Exception:
    """Name the mistake behind `shown`, the text of the first `n` add() calls (`before`: of the first
    n - 1), which is not how the answer `expected` begins: with the flag set, went on after the cut,
    cut at a later occurrence or after the wrong stop string, or missed the stop string; with it
    unset, showed the stop string."""
    if include and shown.startswith(expected) and _went_on_after_the_cut(pieces, ids, expected):
        return Mistake(
            f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
            f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Your add() cut right "
            f"after {winner!r} with token {_went_on_after_the_cut(pieces, ids, expected)}, and then went on "
            "returning text",
            NEVER_STOPPED,
        )
    leaked = f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
    leaked += f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}"
    too_far = include and cut_too_far(cls, shown, pieces, ids, stop, expected, winner, leaked)  # (one_past.py)
    if too_far:
        return too_far
    at_end = include and shown.startswith(expected) and stopped_only_when_cut(pieces, ids, expected, leaked, cls)
    if at_end:
        return at_end
    if include and _at_a_later_occurrence(shown, full, winner):
        return Mistake(f"after token {n} your add() had returned {shown!r} {where}: {LATER}", FIRST)
    skipped = include and shown.startswith(expected) and _skipped_search(cls, leaked.rstrip(", "))
    if skipped:
        return skipped
    cut_after = f"after token {n} your add() had returned {shown!r}"
    other = [t for t in stop if t and t != winner and t in full and shown == full[: full.find(t) + len(t)]]
    # cut after another stop string, which of them a probe of the answer names (its choice rule)
    rule = probe_choice(cls, _stream, tokenizer().encode(TEXT)) if include and other and cls is not None else ""
    if rule:
        return Mistake(f"{cut_after} {where}: you cut after {other[0]!r}, but {winner!r} ends first in the text", rule)
    if include and _missed_by_the_shortest_look_back(pieces, ids, stop, expected, cls):
        shortest = min((s for s in stop if s), key=len)
        return Mistake(
            f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
            f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Your search missed "
            f"{winner!r}, which began in text you had already returned, more than len({shortest!r}) - 1 = "
            f"{len(shortest) - 1} characters back: each stop string s may begin len(s) - 1 characters "
            f"before the text not yet returned ({len(winner) - 1} for {winner!r}), so look back that far "
            "for each one, not one distance (the shortest one's) for all",
            SHORTEST_LOOK_BACK,
        )
    if include and other and len(shown) < len(_full(ids[:n])):  # cut inside a token, after another one
        return Mistake(
            f"{cut_after} {where}: you cut after {other[0]!r}, but {winner!r} ends first in the text", ENDS_FIRST
        )
    if shown.startswith(expected) and include and _missed_by_a_negative_start(pieces, ids, stop, expected):
        return Mistake(
            f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
            f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Your search missed "
            f"{winner!r}, which begins at character {full.find(winner)}: early in the stream, starting "
            "len(s) - 1 characters before the text not yet returned gives a negative start. Skipping the stop "
            "string while it is negative never looks for it, and str.find counts a negative start from the end "
            "of the text, so it looks only at the last few characters, too few to hold it: either way it is missed",
            NEGATIVE_START,
        )
    if shown.startswith(expected) and include and (_missed_by_a_late_start(pieces, ids, stop, cls)):
        start = full.find(winner)
        return Mistake(
            f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
            f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Your search missed "
            f"{winner!r}, which begins at character {start}: it starts one character too late "
            "(len(s) - 2 characters before the text not yet returned), so it never sees a stop string that "
            "begins len(s) - 1 characters back, the first place one can begin (for a 1-character stop string, "
            "the first character not yet returned)",
            LATE_START,
        )
    if shown.startswith(expected) and include:
        return _leaked(n, shown, before, pieces, expected, full, winner=winner, where=where, cls=cls)
    if shown.startswith(expected):  # (the flag is unset: with it set, _leaked answered above)
        return _showed_the_stop(n, shown, expected, stop, full=full, winner=winner, where=where, cls=cls)
    return AssertionError(
        f"after token {n} your add() had returned {shown!r}, which is not how the answer {expected!r} begins {where}"
    )


def _showed_the_stop(
    n: int, shown: str, expected: str, stop: list[str], *, full: str, winner: str, where: str, cls
) -> Mistake:
    """With the flag unset, the first `n` add() calls returned `shown`, text past the cut `expected`:
    the stop strings never reached the base part, the cut was before the stop string that ends first,
    or else some of the stop string was shown."""
    said = f"after token {n} your add() had returned {shown!r} {where}"
    # the cut is before the stop string that begins where `expected` ends
    cut_at = next((s for s in stop if s and full.startswith(s, len(expected))), winner)
    return (
        stops_not_passed_on(cls, said)
        or ends_first_unset(cls, said)
        or flag_read_as_set(cls, said)  # the flag stored as (False,), which is true
        or Mistake(
            f"after token {n} your add() had returned {shown!r}: with include_stop_str_in_output=False "
            f"nothing of the stop string {cut_at!r} may be shown, the base part's rule {where}",
            BASE_RULE,
        )
    )


def _leaked(
    n: int, shown: str, before: str, pieces: list[str], expected: str, full: str, *, winner: str, where: str, cls
) -> Mistake:
    """With the flag set, text after the stop string was shown, for none of the reasons
    _not_how_it_begins names first: no stop string found at all, one found only at the end of the
    decoded text, one that began in text already returned, or else a cut not right after it."""
    start = full.find(winner)
    note = ""
    said = (
        f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
        f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}"
    )
    never = searched_after_the_move(said, cls)  # no stop string found at all, confirmed by a probe
    if never:
        return never
    if start < len(before) and _found_only_at_the_end(cls):
        return Mistake(
            f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
            f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Your add() finds a "
            "stop string only when the decoded text ends with it: on 'one two three' it finds 'two', which "
            "the text ends with after the token ' two', but not 'tw', which ends inside that token",
            ENDS_INSIDE,
        )
    leaked = f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
    kept = kept_only_at_a_token_end(
        cls, leaked + f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}"
    )
    if kept:
        return kept
    if start < len(before):
        note = (
            f" The stop string began in text you had already returned ({before!r}): if you look for "
            "stop strings only in text not yet returned, you never see this one whole."
        )
    return Mistake(
        f"after token {n} your add() had returned {shown!r}: text after the stop string leaked, "
        f"{shown[len(expected) :]!r} comes after the end of {winner!r} {where}. Cut right after the "
        f"end of the stop string, even in the middle of a token.{note}",
        # it went on after the leak and a probe shows it never finds a stop string begun in shown text
        SEARCH_SHOWN if note and "".join(pieces[n:]) and _misses_a_stop_begun_in_returned_text(cls) else LEAKED,
    )


def _judge_joined(
    pieces: list[str], ids: list[int], stop: list[str], include: bool, expected: str, where: str, cls
) -> None:
    """The pieces, finish()'s too, against the answer they must join to (the bounds of each add()
    were checked by _judge; `cls` for the probe that names a cut at an index taken in a slice)."""
    full, joined = _full(ids), "".join(pieces)
    if joined == expected:
        return
    winner, _ = _first_to_complete(full, stop)
    said = f"your pieces {pieces!r} join to {joined!r}, expected {expected!r} {where}"
    if include and expected.startswith(joined) and _missed_by_a_slice_offset(pieces, ids, stop, expected, cls):
        text, probe, cut = SLICE_PROBE
        raise Mistake(
            f"{said}: you cut {len(expected) - len(joined)} character(s) short of the end of {winner!r}. On "
            f"{text!r} with stop={probe} your pieces join to {cut!r}, expected 'I like banan': after ' banana' the "
            "search begins at sent - len(s) + 1 = 4, 'nan' is at 9 in the text but at 5 in decoded[4:], and your cut "
            "at 5 + 3 = 8 is 4 characters early, the slice's start. The index a search of a slice gives counts from "
            "the slice's start, not from the start of the text",
            SLICE_OFFSET,
        )
    moved = slice_after_the_move(cls, pieces, ids, stop, expected, said) if include and winner and cls else None
    if moved:
        raise moved
    if include and winner and joined == expected[: -len(winner)]:
        raise kept_only_at_a_token_end(cls, f"{said}: the stop string {winner!r} is missing") or Mistake(
            f"{said}: the stop string {winner!r} is missing. With include_stop_str_in_output=True the answer "
            "keeps it: cut right after the stop string, not before it",
            MISSING,
        )
    short = expected[len(joined) :] if expected.startswith(joined) else ""
    if include and winner and expected.endswith(winner) and 0 < len(short) < len(winner):
        raise (len(short) == 1 and cls and cut_one_short(cls, pieces, expected, said)) or Mistake(
            f"{said}: the answer stops {len(short)} character(s) short of the end of the stop string {winner!r}, "
            f"{short!r} is missing. With include_stop_str_in_output=True the answer ends with the whole stop string",
            ENDS_WITH_STOP,
        )
    if winner and joined.count(winner) > expected.count(winner):
        if not include and joined.startswith(expected + winner):
            raise stops_not_passed_on(cls, said) or Mistake(
                f"{said}: with include_stop_str_in_output=False the stop string is not shown; the flag decides, "
                "and False is exactly the base part",
                BASE_RULE,
            )
        raise Mistake(
            f"{said}: the stop string {winner!r} was shown twice, once by add() and again by finish(); once a "
            "stop string has been returned, finish() has nothing left to give",
            TWICE,
        )
    if include and _at_a_later_occurrence(joined, full, winner):
        raise Mistake(f"{said}: {LATER}", FIRST)
    if joined.startswith(expected) and include and _went_on_after_the_cut(pieces, ids, expected):
        raise Mistake(
            f"{said}: text after the stop string leaked. Your add() cut right after {winner!r} with token "
            f"{_went_on_after_the_cut(pieces, ids, expected)}, and then finish() returned more",
            NEVER_STOPPED,
        )
    if joined.startswith(expected) and include:
        raise cut_too_far(
            cls, joined, pieces, ids, stop, expected, winner, f"{said}: text after the stop string leaked"
        ) or Mistake(
            f"{said}: text after the stop string leaked; cut right after the end of {winner!r}, even in the "
            "middle of a token",
            LEAKED,
        )
    if expected.startswith(joined):
        raise Mistake(
            f"{said}: {expected[len(joined) :]!r} was never returned; finish() returns what is left",
            "finish() returns all the text not yet returned, up to the cut",
        )
    raise AssertionError(said)


def _play(cls, text: str, stop: list[str], include: bool, expected: str) -> None:
    ids = tokenizer().encode(text)
    try:
        pieces = _stream(cls, ids, stop, include)
    except Exception:
        check_argument_order(cls)  # a crash from the stop list and the flag taken in the wrong order
        raise
    _judge(pieces, ids, stop, include, expected, cls)


def case_across_tokens(cls):
    text, stop = "one two three four five", "three four"
    assert len(_tokens_of(text, stop)) >= 2, "setup: the stop string must span two tokens"
    # The stop string ends inside a token and more tokens follow: none of their text is shown.
    assert _tokens_of(text, "two thr") == [" two", " three"], "setup: 'two thr' must end inside ' three'"
    _play(cls, text, ["two thr"], True, "one two thr")
    _play(cls, text, [stop], True, "one two three four")
    # A longer stop string that began further back in text already returned than the shorter one's
    # look-back: each stop string looks back by its own length.
    assert _tokens_of(text, "r fi") == [" four", " five"], "setup: 'r fi' must span ' four' and ' five'"
    _play(cls, text, ["r fi", "two three four"], True, "one two three four")


def case_inside_a_token(cls):
    text, stop = "one two three four", "wo thr"
    assert len(_tokens_of(text, stop)) == 2 and not text.endswith(stop), "setup: the stop string must end in a token"
    _play(cls, text, [stop], True, "one two thr")
    # At the very start: the first token completes the stop string and carries more text.
    assert _tokens_of("Hello there", "Hel") == ["Hello"], "setup: 'Hel' must end inside the first token"
    _play(cls, "Hello there", ["Hel"], True, "Hel")
    # One token holds the stop string twice: the first occurrence ends the answer.
    assert _tokens_of("I like banana split", "anan") == [" banana"], "setup: ' banana' must be one token"
    _play(cls, "I like banana split", ["an"], True, "I like ban")


def case_multibyte(cls):
    text = "ok 🙂🚀 done"
    assert REPLACEMENT in _full(tokenizer().encode(text)[:3]), "setup: the rocket must span tokens"
    _play(cls, text, ["🚀"], True, "ok 🙂🚀")
    _play(cls, text, ["🚀 d"], True, "ok 🙂🚀 d")
    # A stop string of 2-byte characters that a token completes and carries text past: cut by characters.
    assert _tokens_of("naïve façade done", "ç") == [" façade"], "setup: ' façade' must complete 'ç'"
    _play(cls, "naïve façade done", ["ç"], True, "naïve faç")
    text, stop = "北京欢迎你", "京欢"
    assert len(_tokens_of(text, stop)) > len(stop), "setup: the stop string must take more tokens than characters"
    _play(cls, text, [stop], True, "北京欢")


def case_first_to_complete(cls):
    assert len(_tokens_of(TEXT, "two")) == 1, "setup: ' two' must be one token completing both stop strings"
    assert len(_tokens_of(TEXT, "three")) == 1, "setup: ' three' must be one token completing three stop strings"
    ids = tokenizer().encode(TEXT)
    streams = [_stream(cls, ids, stops, True) for stops, _, _ in ORDERS]
    for (stops, expected, why), pieces in zip(ORDERS, streams):
        joined = "".join(pieces)
        chose = joined != expected and joined in {TEXT[: TEXT.find(s) + len(s)] for s in stops}
        if chose and not _went_on_after_the_cut(pieces, ids, expected):  # (else _judge says it)
            said = (
                f"stop={stops}, include_stop_str_in_output=True: your pieces join to {joined!r}, expected {expected!r}"
            )
            # a stop string missed because it began in the first characters returned, not a choice rule
            raise skipped_near_the_start(cls, said) or Mistake(
                f"stop={stops}, include_stop_str_in_output=True: one token completes all of them, and your pieces "
                f"join to {joined!r}, expected {expected!r}: {why}. The stop string that ends first in the text "
                "wins, whatever its place in the list",
                choice_rule([(o[0], "".join(p)) for o, p in zip(ORDERS, streams)]),
            )
        _judge(pieces, ids, stops, True, expected, cls)


def case_no_stop_and_finish(cls):
    _play(cls, "The KV cache stores keys and values. 北京 🙂", [], True, "The KV cache stores keys and values. 北京 🙂")
    _play(cls, "one two three", ["xyz"], True, "one two three")
    # The request ends while 'three' could still begin the stop string: finish() returns it.
    _play(cls, "one two three", ["three four"], True, "one two three")
    # The stop string completes with the very last token: finish() must not repeat it.
    _play(cls, "one two three", ["two three"], True, "one two three")
    # The text finish() flushes completes a stop string begun in text already returned.
    check_final_flush_searched(cls, _judge)
    # A special token in the middle of the stream: it adds no text, and the tokens after it lose none.
    ids = probe_ids()
    _judge(_stream(cls, ids, [], True), ids, [], True, _full(ids), cls)


def case_not_held_for_ever(cls):
    text = "one two three five six seven eight nine ten eleven"
    for include in (True, False):
        _play(cls, text, ["three four"], include, text)


def case_flag_false(cls):
    _play(cls, "one two three four five", ["three four"], False, "one two ")
    _play(cls, "one two three four", ["wo thr"], False, "one t")
    _play(cls, "Hello there", ["Hel"], False, "")
    _play(cls, "北京欢迎你", ["欢迎"], False, "北京")
    _play(cls, "one two three", ["wo", " t"], False, "one")
    # ' two' completes both: 'tw' ends first, but 'e two' begins first and the cut is before it
    _play(cls, "one two three", ["e two", "tw"], False, "on")
    # Requests with and without the flag stream at once: each object keeps its own flag.
    check_flags_apart(cls)


CASES = [
    Case(
        "stretch: stop string across tokens, kept",
        case_across_tokens,
        "with the flag set the answer ends with the stop string",
    ),
    Case(
        "stretch: text after the stop string is cut",
        case_inside_a_token,
        "a token can carry text past the end of the stop string",
    ),
    Case("stretch: characters spanning tokens", case_multibyte, "still never half a character"),
    Case(
        "stretch: the first stop string to complete wins",
        case_first_to_complete,
        "the smallest end among the stop strings found, not the first listed nor the first to begin",
    ),
    Case(
        "stretch: no stop string, and finish()",
        case_no_stop_and_finish,
        "finish() returns what is left, and never a second copy",
    ),
    Case(
        "stretch: text is not held back for ever",
        case_not_held_for_ever,
        "a possible stop string's beginning waits only until it is known",
    ),
    Case(
        "stretch: include_stop_str_in_output=False is the base part",
        case_flag_false,
        "with the flag unset, cut before the stop string, as in the base part",
    ),
    Case(
        "stretch: in the real engine",
        case_real_engine,
        "the detokenizer worker builds one object per request and calls add() per token, finish() at the end",
        engine=True,
    ),
    detokenizer_case(reference_stop_keeping, judge=_judge, examples=150),
]
SYMBOL = "StopKeepingDetokenizer"
SOLUTION = reference_stop_keeping
REFERENCES = [package_detokenizer]  # the base part's package answer is not an answer here either
