"""Exercise 3 — incremental detokenization: a class with `add(token_id) -> str` and `finish() -> str`.

It is built as `cls(tokenizer, stop)` for each request, exactly like the detokenizer worker's
`IncrementalDetokenizer`. Every piece it returns goes straight to the client, so a piece may
never end in half a character, never show any part of a stop string, and the pieces together
must equal the full decode (cut before the first stop string).

The cases use the default model's real tokenizer: on it a CJK character or an emoji takes two or
three byte tokens, and a stop string spans tokens or ends inside one (the setups assert it), which
a one-character-per-token toy tokenizer would hide.
"""

from __future__ import annotations

import dataclasses
import functools

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case, Mistake, expect
from minisgl_edu.grading.detokenizer.absent_in_min import check_absent_in_min
from minisgl_edu.grading.detokenizer.answer_start import check_answer_start_kept
from minisgl_edu.grading.detokenizer.before_text import check_before_text
from minisgl_edu.grading.detokenizer.common import (
    EARLIEST_START,
    FIRST_OCCURRENCE,
    HOLD_BACK,
    REPLACEMENT,
    SEARCH_ALL,
    WHOLE_CHARACTERS,
    _full,
    _piece,
    before_a_later_occurrence,
    check_joined_to,
    pieces_of,
    repeated_at_finish,
)
from minisgl_edu.grading.detokenizer.exact_case import check_case_kept
from minisgl_edu.grading.detokenizer.false_start_inside import EXPECTED as INSIDE_EXPECTED
from minisgl_edu.grading.detokenizer.false_start_inside import STOP as INSIDE
from minisgl_edu.grading.detokenizer.false_start_inside import check_start_inside_a_false_start, false_start_ids
from minisgl_edu.grading.detokenizer.final_flush import check_final_flush_cut
from minisgl_edu.grading.detokenizer.find_end import check_search_reaches_the_end
from minisgl_edu.grading.detokenizer.growing_stop import STOP, check_held_as_it_grows, growing_stop_ids
from minisgl_edu.grading.detokenizer.hold_of_one import check_hold_of_one
from minisgl_edu.grading.detokenizer.index_for_find import check_index_for_find
from minisgl_edu.grading.detokenizer.last_token_before import check_last_token_before
from minisgl_edu.grading.detokenizer.late_search import check_search_start
from minisgl_edu.grading.detokenizer.leading_space import check_context_in_add, check_context_in_finish
from minisgl_edu.grading.detokenizer.literal_stop import check_literal_stops
from minisgl_edu.grading.detokenizer.longest_start import check_longest_start_of_all
from minisgl_edu.grading.detokenizer.lstrip_before import check_lstripped_before
from minisgl_edu.grading.detokenizer.negative_slice import check_negative_slice
from minisgl_edu.grading.detokenizer.not_found_offset import check_not_found_offset
from minisgl_edu.grading.detokenizer.objects_apart import check_objects_apart
from minisgl_edu.grading.detokenizer.offset_zero import STOP as STOP_AT_ZERO
from minisgl_edu.grading.detokenizer.offset_zero import check_stop_at_offset_zero
from minisgl_edu.grading.detokenizer.one_character_start import check_one_character_start
from minisgl_edu.grading.detokenizer.repeated_text import check_no_repeat
from minisgl_edu.grading.detokenizer.replaced_decoded import check_decoded_kept
from minisgl_edu.grading.detokenizer.scenes import STRAY, STRAY_BYTE, detokenizer_case
from minisgl_edu.grading.detokenizer.sent_for_read import check_sliced_by_sent
from minisgl_edu.grading.detokenizer.short_start import check_start_not_lost
from minisgl_edu.grading.detokenizer.space_before_stop import check_space_before_stop_kept
from minisgl_edu.grading.detokenizer.special_before import check_special_before
from minisgl_edu.grading.detokenizer.special_flush import check_special_flush
from minisgl_edu.grading.detokenizer.stale_before import check_stale_before
from minisgl_edu.grading.detokenizer.stopped import check_stopped
from minisgl_edu.grading.detokenizer.stripped_tail import check_stripped_tail
from minisgl_edu.grading.detokenizer.tail_lengths import check_every_tail_length, check_longest_start_tried
from minisgl_edu.grading.detokenizer.unfinished_tail import check_unfinished_before_eos, check_unfinished_character
from minisgl_edu.grading.detokenizer.whitespace_stop import WHITESPACE_PLAYS, check_whitespace_kept
from minisgl_edu.grading.harness import PROMPTS, reference_run, tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference


def _stream(cls, ids: list[int], stop=()) -> list[str]:
    return pieces_of(cls(tokenizer(), list(stop)), ids)


def _tokens_of(text: str, part: str) -> list[str]:
    """The tokens of `text` whose characters overlap the first `part` (setup checks)."""
    ids, start = tokenizer().encode(text), text.index(part)
    out, pos = [], 0
    for i in range(len(ids)):
        end = len(_full(ids[: i + 1]))
        if end > start and pos < start + len(part):
            out.append(_full(ids[i : i + 1]))
        pos = end
    return out


def _check_timely(cls, ids: list[int], stop=()) -> None:
    """After every add(), the text shown must be at least what the package's detokenizer has shown by
    then: whole characters that cannot be the start of a stop string go out at once, not at finish()."""
    tok = tokenizer()
    mine, ref = cls(tok, list(stop)), reference(tok, list(stop))
    shown, ref_shown = "", ""
    for n, t in enumerate(ids):
        shown += _piece(mine.add(t), f"add({t})")
        ref_shown += ref.add(t)
        if len(shown) < len(ref_shown):
            waiting = ref_shown[len(shown) :]
            if stop:
                why = (
                    f"it can no longer be the start of a stop string of {list(stop)!r}, so it goes out with this "
                    "token: hold back only a tail that could still begin a stop string, and release it as soon "
                    "as the next tokens show it does not"
                )
            else:
                why = "there are no stop strings, so whole characters go out as soon as they are decoded"
                _check_not_lost(cls, ids, n, t, shown, waiting)
            check_negative_slice(cls)  # text only where a tail is held: the piece cut at -hold, empty for 0
            raise Mistake(
                f"after token {n + 1} ({_full([t])!r}) your add() had returned {shown!r}, but {waiting!r} was "
                f"already safe to show: {why}; the client should not wait for finish()",
                "release held-back text as soon as the next token shows it cannot begin a stop string"
                if stop
                else "add() returns each whole character as soon as it is decoded",
            )


def _check_not_lost(cls, ids: list[int], n: int, t: int, shown: str, waiting: str) -> None:
    """The text an add() kept back never comes out, not even at finish(): a character that spans
    tokens was lost (the window moved on past the tokens of an unfinished character), or the new text
    was cut at the length of a decode from the old window (`check_stale_before`) or with str.lstrip.
    The lstrip probe comes first: the letters it eats may occur later in the text, which the test
    below reads as text only delayed. Then the probe for ids sliced with the character count `sent`
    instead of the token count `read`, which stalls or loses text in the same way."""
    check_lstripped_before(cls)
    check_sliced_by_sent(cls)
    joined, full = "".join(_stream(cls, ids)), _full(ids)
    if len(joined) < len(full) and REPLACEMENT not in joined and waiting.strip()[:1] not in joined[len(shown) :]:
        check_stale_before(cls)
        if not any(_full(ids[:k]).endswith(REPLACEMENT) for k in range(1, len(ids))):
            return  # no character spans tokens here, so none was lost that way: the caller's hint stands
        check_before_text(cls, ids)
        raise Mistake(
            f"after token {n + 1} ({_full([t])!r}) your add() had returned {shown!r}, and {waiting!r} never comes "
            f"out, not even at finish(): the pieces join to {joined!r}, expected {full!r}. A character whose bytes "
            "span tokens is lost: while the new text ends in '\\ufffd', leave the window and the read offset where "
            "they are, so the next token's bytes decode together with the ones before them",
            "while the new text ends in '\\ufffd', do not move the offsets on: the next token completes that character",
        )


def _check_text(cls, text: str) -> None:
    ids = tokenizer().encode(text)
    _check_timely(cls, ids)
    pieces = _stream(cls, ids)
    bad = [p for p in pieces if REPLACEMENT in p]
    if bad:
        raise Mistake(
            f"a piece contains a broken character: {bad[0]!r} (part of a character that spans tokens was "
            "decoded on its own; hold text back while the decoded window ends in '\\ufffd')",
            WHOLE_CHARACTERS,
        )
    check_joined_to(pieces, _full(ids))


def _check_never_partly_shown(pieces: list[str], expected: str, stop: str, cls=None) -> None:
    """No add() shows a stop string or the start of one; with `cls`, an answer that shows the start
    of one is asked which tails it holds back (`check_every_tail_length`), to name that mistake."""
    check_no_repeat(pieces, expected + stop)
    shown = ""
    for n, piece in enumerate(pieces[:-1]):
        shown += piece
        if len(shown) > len(expected) and stop in shown:
            check_search_reaches_the_end(cls)  # the stop string missed where it ends at the last character
            check_search_start(cls, n + 1, shown, stop)
            check_absent_in_min(cls, pieces, [stop])  # the other stop string of the list is absent: min() took -1
            raise Mistake(
                f"after token {n + 1} your add() had returned {shown!r}, the stop string {stop!r} included: look "
                "for stop strings in all the text not yet returned, not only in the newest piece",
                SEARCH_ALL,
            )
        if piece and len(shown) - len(piece) == len(expected) and stop.startswith(piece):
            check_one_character_start(cls)
            if cls is not None:
                check_longest_start_tried(cls)
            raise Mistake(
                f"after token {n + 1} your add() returned {piece!r}, all the text not yet returned, and all of it "
                f"could begin the stop string {stop!r}: the tail you hold back may be the whole unsent text, "
                "not at most one character less",
                "the held-back tail may be all the text not yet returned: try every length up to len(unsent), "
                "that length included",
            )
        if len(shown) > len(expected):
            check_hold_of_one(cls)  # exactly one character held back: the test's True taken as the length
            check_one_character_start(cls)
            if cls is not None:
                check_longest_start_tried(cls)
                check_every_tail_length(cls)
            raise Mistake(
                f"after token {n + 1} your add() had returned {shown!r}: the end of it could still be the start of "
                f"the stop string {stop!r}, so hold it back until the next tokens show whether the stop string "
                "follows",
                HOLD_BACK,
            )


def case_ascii(cls):
    _check_text(cls, "The KV cache stores keys and values, so each step computes one new token.")
    check_context_in_add(cls)  # a SentencePiece-style tokenizer: a token decoded alone loses its space
    check_answer_start_kept(cls)  # an answer that begins with a space or a newline keeps it


def case_multibyte(cls):
    text = "Café déjà vu — naïve façade. 北京欢迎你！ 🙂🚀👩‍💻 ok"
    assert REPLACEMENT in "".join(_full([t]) for t in tokenizer().encode(text)), (
        "setup: some characters must span tokens"
    )
    _check_text(cls, text)


def case_special_tokens(cls):
    tok = tokenizer()
    ids = tok.encode("Hello there") + [tok.convert_tokens_to_ids("<|im_end|>")]
    pieces = _stream(cls, ids)
    assert "<|im_end|>" not in "".join(pieces), (
        "<|im_end|> was shown: special tokens are not text, decode with skip_special_tokens=True"
    )
    check_joined_to(pieces, "Hello there")
    check_special_before(lambda tok: cls(tok, []))  # <|im_end|> in the middle: both decodes skip it
    check_special_flush(cls)  # ... and its add() releases nothing held back


def case_stray_byte(cls):
    """A byte token that is no character on its own (a model may sample one anywhere): the decode shows
    it as '\\ufffd' in the middle of the text, for good, since no later token completes it. Only a
    decode that *ends* in '\\ufffd' may be a character still being cut; the text after the byte is
    whole characters and goes out at once."""
    tok = tokenizer()
    ids = tok.encode("one two") + [STRAY_BYTE] + tok.encode(" three four")
    full = _full(ids)
    at = full.find(REPLACEMENT)
    assert 0 < at < len(full) - 1, "setup: the stray byte must decode to '\\ufffd' in the middle of the text"
    detok = cls(tok, [])
    shown = "".join(_piece(detok.add(t), f"add({t})") for t in ids)
    if shown == full[:at]:
        raise Mistake(
            f"after all {len(ids)} tokens your add() had returned only {shown!r}: token {STRAY_BYTE} is a byte that "
            f"is no character on its own, so the text decodes to {full!r}, with '\\ufffd' in the middle for good "
            "(no later token completes it). Your add() kept waiting from there on, so the rest came out only at "
            "finish()",
            STRAY,
        )
    _check_timely(cls, ids)
    check_joined_to(_stream(cls, ids), full)


def case_stop_across_tokens(cls):
    text, stop = "one two three four five", "three four"
    assert len(_tokens_of(text, stop)) >= 2, "setup: the stop string must span two tokens"
    pieces = _stream(cls, tokenizer().encode(text), [stop])
    expected = "one two "
    check_stopped(pieces, tokenizer().encode(text), [stop], expected)
    _check_never_partly_shown(pieces, expected, stop, cls)
    _check_joined(pieces, [stop], expected)
    check_case_kept(cls)  # 'Three Four' is no stop string of this text; 'World' of 'Hello World' is
    # Whitespace only ('\n\n' over two tokens, ' ' inside ' two'): stop strings like any other.
    for text, stops, expected in WHITESPACE_PLAYS:
        pieces = _stream(cls, tokenizer().encode(text), stops)
        check_whitespace_kept(cls, pieces, text, stops)
        _check_joined(pieces, stops, expected, cls)


def _check_joined(pieces: list[str], stop: list[str], expected: str, cls=None) -> None:
    joined = "".join(pieces)
    if any(s in joined for s in stop):
        check_search_reaches_the_end(cls)  # find(s, sent, -1): the last character never searched
        check_one_character_start(cls)  # its first character shown before the token that completes it
        check_stripped_tail(
            cls, pieces, stop
        )  # a newline that begins it shown at once: the tail tested on text.rstrip()
    for s in stop:
        expect(
            s not in joined,
            f"the stop string {s!r} was shown to the client ({pieces!r}): look for stop strings "
            "in all the text not yet returned, not only in the newest piece",
            SEARCH_ALL,
        )
    check_joined_to(pieces, expected, f"the pieces {pieces!r}")


def case_stop_inside_token(cls):
    text, stop = "one two three four", "wo thr"
    assert len(_tokens_of(text, stop)) == 2 and not text.endswith(stop), (
        "setup: the stop string must end inside a token"
    )
    pieces = _stream(cls, tokenizer().encode(text), [stop])
    check_stopped(pieces, tokenizer().encode(text), [stop], "one t")
    _check_never_partly_shown(pieces, "one t", stop, cls)
    _check_joined(pieces, [stop], "one t")
    check_literal_stops(cls)  # '.' and '(' are text to find, not patterns
    # One token brings the stop string three times: the text is cut before the first of them.
    text, stop = "Wait... what?", "."
    assert _tokens_of(text, "...") == ["..."], "setup: '...' must be one token"
    pieces = _stream(cls, tokenizer().encode(text), [stop])
    check_stopped(pieces, tokenizer().encode(text), [stop], "Wait")
    _check_first_occurrence(pieces, text, [stop])
    _check_joined(pieces, [stop], "Wait")
    # The first token is the whole stop string, at character 0: str.find returns 0 there, a match.
    _check_joined(check_stop_at_offset_zero(cls), STOP_AT_ZERO, "")


def _check_first_occurrence(pieces: list[str], full: str, stop: list[str]) -> None:
    """The pieces are cut right before a later occurrence of a stop string they show: the search
    found its last occurrence in the text not yet returned (str.rfind), not its first."""
    joined = "".join(pieces)
    s = before_a_later_occurrence(joined, full, stop)
    if s:
        raise Mistake(
            f"stop={stop!r}: the pieces {pieces!r} join to {joined!r}, cut before the stop string {s!r} at character "
            f"{len(joined)}, but it occurs first at character {full.find(s)}, and that occurrence reached the "
            "client. One token can bring a stop string more than once: the text ends before its first occurrence",
            FIRST_OCCURRENCE,
        )


def case_held_back_at_finish(cls):
    text, stop = "one two three", "three four"
    pieces = _stream(cls, tokenizer().encode(text), [stop])
    joined = "".join(pieces)
    if repeated_at_finish(pieces, text):
        check_joined_to(pieces, text)
    assert joined == text, (
        f"the pieces {pieces!r} join to {joined!r}, expected {text!r}: the request ended while "
        f"'three' was held back as a possible start of {stop!r}, and finish() must return it"
    )
    check_unfinished_character(cls)
    check_unfinished_before_eos(cls)  # the same bytes, then the EOS: still flushed
    check_context_in_finish(cls)  # the unfinished tokens decoded with the token before them
    check_final_flush_cut(cls)  # their text completes a stop string begun in the held-back tail


def case_earliest_stop(cls):
    text, stops = "one two three", ["wo", " t"]
    assert len(_tokens_of(text, "two")) == 1, "setup: ' two' must be one token holding both stop strings"
    pieces = _stream(cls, tokenizer().encode(text), stops)
    check_stopped(pieces, tokenizer().encode(text), stops, "one")
    joined = "".join(pieces)
    assert joined == "one", (
        f"the pieces join to {joined!r}, expected 'one': the token ' two' completes both stop "
        "strings; cut at the earliest one in the text, whatever their order in the list"
    )
    # 'e two' begins first but ends after 'tw': the cut is before the one that begins first
    for stops in (["e two", "tw"], ["tw", "e two"]):
        pieces = _stream(cls, tokenizer().encode(text), stops)
        check_stopped(pieces, tokenizer().encode(text), stops, "on")
        joined = "".join(pieces)
        if joined == "one " and pieces[0] == "on":
            check_search_reaches_the_end(cls)  # 'e two' missed: it ends at the last character
            raise Mistake(
                f"stop={stops}: the pieces join to 'one ', expected 'on'. The token ' two' completes both stop "
                "strings; 'tw' ends first, but 'e two' begins first, and the text is cut before the stop string "
                "that begins first, so its 'e ' is never shown",
                EARLIEST_START,
            )
        if pieces[0] == "one":
            check_one_character_start(cls)
            raise Mistake(
                f"stop={stops}: after the token 'one' your add() had returned 'one', but its 'e' could still be "
                "the start of 'e two' (the next token completes it), so it waits until the next token shows",
                HOLD_BACK + (" of the list, any of them, not only the first" if stops[0] != "e two" else ""),
            )
        assert joined == "on", (
            f"stop={stops}: the pieces join to {joined!r}, expected 'on': the token ' two' completes both stop "
            "strings; cut at the earliest one in the text, whatever their order in the list"
        )
    # 'one two' ends in 'o' (of 'o!') and in 'two' (of 'two three'): the longer start is held back
    check_longest_start_of_all(cls)


def case_false_starts(cls):
    text, stop = "They threw three trees, then three four times", ["three four", "trees!"]
    ids = tokenizer().encode(text)
    assert [_full([t]) for t in ids][2:4] == [" three", " trees"], "setup: ' three' and ' trees' must be tokens"
    _check_timely(cls, ids, stop)
    pieces = _stream(cls, ids, stop)
    check_stopped(pieces, ids, stop, "They threw three trees, then ")
    _check_never_partly_shown(pieces, "They threw three trees, then ", "three four", cls)
    _check_joined(pieces, stop, "They threw three trees, then ")
    check_start_not_lost(cls)  # the stream begins with 'Th', a start of 'Three four', then a long token
    # 'no no yes' begins at the second 'no' of its own false start 'no no no'
    pieces = _stream(cls, false_start_ids(), [INSIDE])
    check_start_inside_a_false_start(cls, pieces)
    _check_joined(pieces, [INSIDE], INSIDE_EXPECTED, cls)


def case_prefix_of_another(cls):
    for stop in (["three", "three four"], ["three four", "three"]):
        pieces = _stream(cls, tokenizer().encode("one two three"), stop)
        if "three" in "".join(pieces):
            check_search_reaches_the_end(cls)
            check_absent_in_min(cls, pieces, stop)  # not cut at finish: 'three four' is absent, min() took -1
            raise Mistake(
                f"stop={stop!r}: the request ended right after ' three', and your pieces {pieces!r} show 'three'. It "
                "is a whole stop string, even though it is also the start of 'three four' (the scheduler ends the "
                "request on that very token): finish() must still cut at a stop string, never show one",
                # shown by finish(): it released the held-back tail without looking; else the case's hint
                "finish() looks for stop strings too: the held-back tail may be a whole stop string"
                if "three" in pieces[-1]
                else "",
            )
        if "".join(pieces) == "one two":  # the space before the stop string missing: stripped?
            check_space_before_stop_kept(cls)
        _check_joined(pieces, stop, "one two ")
        pieces = _stream(cls, tokenizer().encode("one two three four five"), stop)
        check_stopped(pieces, tokenizer().encode("one two three four five"), stop, "one two ")
        _check_joined(pieces, stop, "one two ")


def case_growing_start(cls):
    """The start of 'red blue red blue' grows over three tokens ('red', 'red blue', 'red blue red', the
    last ending in a shorter start of it) before ' green' shows it is none (growing_stop.py)."""
    ids = growing_stop_ids()
    check_held_as_it_grows(cls, ids, [STOP])
    _check_timely(cls, ids, [STOP])
    _check_joined(_stream(cls, ids, [STOP]), [STOP], _full(ids))


def case_stop_cjk(cls):
    text, stop = "北京欢迎你", "欢迎"
    assert len(_tokens_of(text, stop)) > len(stop), "setup: the stop string must take more tokens than characters"
    pieces = _stream(cls, tokenizer().encode(text), [stop])
    bad = [p for p in pieces if REPLACEMENT in p]
    if bad:
        raise Mistake(f"a piece contains a broken character: {bad[0]!r}", WHOLE_CHARACTERS)
    check_stopped(pieces, tokenizer().encode(text), [stop], "北京")
    _check_never_partly_shown(pieces, "北京", stop, cls)
    _check_joined(pieces, [stop], "北京")


def case_two_at_once(cls):
    tok = tokenizer()
    a_text, b_text = "The first answer.", "A second, different one."
    a_ids, b_ids = tok.encode(a_text), tok.encode(b_text)
    a, b = cls(tok, []), cls(tok, [])
    got = {"a": "", "b": ""}
    for i in range(max(len(a_ids), len(b_ids))):  # the worker interleaves the requests' tokens
        if i < len(a_ids):
            got["a"] += _piece(a.add(a_ids[i]), "add()")
        if i < len(b_ids):
            got["b"] += _piece(b.add(b_ids[i]), "add()")
    got["a"] += _piece(a.finish(), "finish()")
    got["b"] += _piece(b.finish(), "finish()")
    assert (got["a"], got["b"]) == (a_text, b_text), (
        f"two requests at once came out as {got['a']!r} and {got['b']!r}: one object's text leaked into the other "
        "request (state kept on the class, e.g. `ids = []` in the class body, is shared by every object)"
    )


def _objects_apart(run):
    """The case, and when it fails, `check_objects_apart` (objects_apart.py): an answer whose objects
    share their state fails every case, and the first failure names that, not what it broke in that
    case's text (so do
    str.index for str.find, a `decoded` replaced by each token's text and `before` decoded from the last read
    token alone, each confirmed by a probe)."""

    @functools.wraps(run)
    def checked(cls):
        try:
            run(cls)
        except Exception as e:
            check_objects_apart(cls)
            check_not_found_offset(cls)  # every stream ends after its first piece: find's -1 plus sent
            check_index_for_find(cls, e)  # a crash named only where a probe shows str.index's ValueError
            check_decoded_kept(cls)  # text lost or cut: decoded holds only the newest token's text
            check_last_token_before(cls)  # text lost or repeated after a character of several tokens
            raise

    return checked


def case_real_engine(cls):
    _stream(cls, [])  # an unfinished class fails here, before the engine runs
    ref = reference_run("detokenizer", [SamplingParams(max_tokens=16)] * len(PROMPTS))
    for uid, ids in ref.tokens.items():
        pieces = _stream(cls, ids)
        expected = "".join(_stream(reference, ids))
        if repeated_at_finish(pieces, expected):
            check_joined_to(pieces, expected, f"request {uid}: your pieces")
        assert "".join(pieces) == expected, f"request {uid}: your text {''.join(pieces)!r} differs from {expected!r}"
        assert all(REPLACEMENT not in p for p in pieces), f"request {uid}: a broken character was shown"


CASES = [
    Case("plain text", case_ascii, "decode a window of recent tokens and return what is new"),
    Case(
        "characters spanning tokens",
        case_multibyte,
        "hold text back while the decoded window ends in '\\ufffd' and return '': the rest of the character "
        "comes with a later add()",
    ),
    Case("special tokens skipped", case_special_tokens, "tokenizer.decode(ids, skip_special_tokens=True)"),
    Case("a byte that is no character", case_stray_byte, STRAY),
    Case("stop string across tokens", case_stop_across_tokens, "hold back a tail that could begin a stop string"),
    Case("stop string inside a token", case_stop_inside_token, "cut at the stop string, even inside a token"),
    Case("held-back text at finish()", case_held_back_at_finish, "finish() releases what is held back"),
    Case("the earliest stop string wins", case_earliest_stop, "the smallest position among all stop strings"),
    Case(
        "false starts of a stop string",
        case_false_starts,
        "text held back as a possible stop string goes out once the next token shows it is not one",
    ),
    Case(
        "a stop string that begins another",
        case_prefix_of_another,
        "a whole stop string ends the text even when a longer one could still follow",
    ),
    Case(
        "a stop string's start over several tokens",
        case_growing_start,
        "hold back the longest tail that could begin a stop string, wherever in the unsent text it begins",
    ),
    Case("stop string of CJK characters", case_stop_cjk, "both traps at once"),
    Case("two requests at once", case_two_at_once, "keep all state on self, set in __init__"),
    Case(
        "tokens from the real engine",
        case_real_engine,
        "three real generations, compared with the package's detokenizer",
        engine=True,
    ),
    detokenizer_case(reference),
]
# every hand-written case names objects that share their state, whatever else it checks
CASES = [c if c.generated else dataclasses.replace(c, run=_objects_apart(c.run)) for c in CASES]
SYMBOL = "IncrementalDetokenizer"
SOLUTION = reference
