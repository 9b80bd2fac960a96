"""Exercise 1's hand cases on the size of the decode window: the stop string must fit in the tokens
the check decodes, and a stop string takes more tokens than it has characters (a CJK character is
three bytes, an emoji four, and the byte-level tokenizer can spend a token on each), more still with
ignored EOS ids inside it, and every stop string of the list must fit, so the window is sized by the
one with the most bytes. The last check keeps the window a window: never the whole output.
"""

from __future__ import annotations

from minisgl_edu.core import Req
from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.finish.capped_window import WINDOW_CAPPED, window_cap
from minisgl_edu.grading.finish.character_window import ONE_CHARACTER_OUT, PER_CHARACTER, per_character_why
from minisgl_edu.grading.finish.expect import _completes, _expect, _spans
from minisgl_edu.grading.finish.searched_text import ALTERED_TEXT
from minisgl_edu.grading.finish.tokens import EOS, _decode, _ids, _req, noting_decode
from minisgl_edu.grading.finish.window_text import WINDOW_OF_DECODED_TEXT, window_of_decoded_text

WINDOW_IN_CHARACTERS = (
    "count the stop string's bytes, len(s.encode()), not its characters, len(s): your window holds a stop "
    "string of one-byte characters (a token each), not '北京', 2 characters but 6 bytes in UTF-8, and the "
    "byte-level tokenizer can spend a token on each byte; decode len(s.encode()) tokens plus a margin"
)


def _window_fits_characters(fn) -> bool:
    """The answer finds '1+2+3+4+5+6+7' (13 characters, one token each) at the end of the output: a
    window of at least len(s) tokens there. With '北京' (2 characters, 6 bytes) missed, its window
    grows with the characters of the stop string, not its bytes."""
    ids = _ids("x 1+2+3+4+5+6+7")
    try:
        return fn(_req(ids, stop=["1+2+3+4+5+6+7"]), set(EOS), _decode) == "stop"
    except Exception:
        return False


def case_stop_multibyte(fn):
    text, stop = "我爱北京", "北京"
    ids = _ids(text)
    n = _spans(text, stop)
    assert n > len(stop), "setup: the stop string must take more tokens than it has characters"
    try:
        _expect(
            fn,
            _req(ids, stop=[stop]),
            "stop",
            f"the stop string {stop!r} has {len(stop)} characters ({len(stop.encode())} bytes in UTF-8) but takes "
            f"{n} tokens (each CJK character is two or three byte tokens): the decode window needs a margin beyond "
            "len(stop) tokens",
        )
    except Mistake as e:
        if not e.hint and window_of_decoded_text(fn):  # grown until its text has len(s) characters
            e.hint = WINDOW_OF_DECODED_TEXT
        elif not e.hint and _window_fits_characters(fn):  # else the case's hint: a window too short
            e.hint = WINDOW_IN_CHARACTERS
        raise
    # 'a', the first token of '我' without its last byte (the model may sample that), then 'b': the text
    # is 'a\ufffdb', which does not hold 'ab'
    cut = [_ids("a")[0], _ids("我")[0], _ids("b")[0]]
    assert _decode(cut) == "a\ufffdb", "setup: a character cut between 'a' and 'b' should decode to U+FFFD"
    _expect(
        fn,
        _req(cut, stop=["ab"]),
        None,
        "the output decodes to 'a\ufffdb' (a CJK character cut short between 'a' and 'b'): it does not hold the "
        "stop string 'ab'",
        hint=ALTERED_TEXT,
    )


def case_stop_emoji_margin(fn):
    text, stop = "x 🦀🦀!!", "🦀🦀!"
    ids = _ids(text)
    done, need = _completes(ids, stop)
    assert need == len(stop) + 4 and not _decode(ids[:done]).endswith(stop), (
        "setup: the stop string must need a window of exactly len(stop) + 4 tokens and end inside the newest token"
    )
    _expect(
        fn,
        _req(ids[: done - 1], stop=[stop]),
        None,
        f"{_decode(ids[: done - 1])!r} does not contain {stop!r} yet (its '!' comes with the next token)",
    )
    _expect(
        fn,
        _req(ids[:done], stop=[stop]),
        "stop",
        f"the newest token '!!' completes {stop!r} ({len(stop)} characters) and carries one more '!'; the stop "
        f"string spans the last {need} tokens: an emoji is four bytes in UTF-8 and the byte-level tokenizer can "
        "spend a token on each, so count the window in bytes (len(s.encode())), not in characters",
    )
    flag = _ids("Paris 🇫🇷, France")
    _expect(
        fn,
        _req(flag[:7], stop=["🇫🇷"]),
        "stop",
        "the flag '🇫🇷' is 2 characters (two regional indicators, four bytes each) and takes the last 6 tokens: "
        "count the window in bytes, not in characters",
    )
    six = "🇫🇷🇩🇪🇮🇹🇪🇸🇵🇹🇬🇧"  # 48 bytes: a window of a fixed size below 36 tokens misses it
    for text, stop in (("go 🚀🚀🚀 now", "🚀🚀🚀"), ("Paris 🇫🇷🇩🇪 Berlin", "🇫🇷🇩🇪"), (f"Paris {six} Europe", six)):
        ids = _ids(text)
        done, need = _completes(ids, stop)
        assert need > len(stop) + 4, f"setup: {stop!r} must need more than len(stop) + 4 tokens"
        try:
            _expect(
                fn,
                _req(ids[:done], stop=[stop]),
                "stop",
                f"{stop!r} is {len(stop)} characters, {len(stop.encode())} bytes in UTF-8, and spans the last {need} "
                "tokens: a window of len(stop) plus a few tokens misses it, and the request never stops. A token "
                "stands for at least one byte, so a window of len(s.encode()) tokens (plus a margin) always holds it",
                hint="count the window in bytes, len(s.encode()), not in characters: a few tokens more than len(s) "
                "is too few",
            )
        except Mistake as e:
            cap = window_cap(fn)
            if cap:  # a window of bytes, right for the shorter stop strings: it stops growing at a cap
                e.args = (f"{e}; your window follows the bytes of a short stop string but never exceeds {cap} tokens",)
                e.hint = WINDOW_CAPPED
            raise


IGNORED_EOS_MARGIN = (
    "an EOS that ignore_eos keeps stays in req.output_ids and decodes to no text (decode skips special "
    "tokens): it adds a token to the stop string's span but no byte, so size the window len(s.encode()) plus "
    "a margin of a few tokens (up to three ignored EOS ids may sit inside a stop string)"
)


def _widest_decode(fn, req: Req) -> int:
    """The most ids the answer passed to one call of decode on `req` (0 when it raised)."""
    calls: list[list[int]] = []
    try:
        fn(req, set(EOS), noting_decode(calls))
    except Exception:
        pass
    return max((len(ids) for ids in calls), default=0)


def case_ignored_eos_in_stop(fn):
    ids = _ids("x 北京")
    out = ids[:4] + [2] + ids[4:5] + [0] + ids[5:]  # an ignored EOS between the characters, one inside 京
    assert _decode(out) == "x 北京" and _completes(out, "北京") == (8, 7), "setup: '北京' must span 7 tokens"
    _expect(
        fn,
        _req(out[:-1], stop=["北京"], ignore_eos=True),
        None,
        f"{_decode(out[:-1])!r} does not hold '北京' yet (the last byte of 京 comes with the next token)",
    )
    req = _req(out, stop=["北京"], ignore_eos=True)
    bytes_only = _widest_decode(fn, _req(out, stop=["北京"], ignore_eos=True)) == len("北京".encode())
    _expect(
        fn,
        req,
        "stop",
        "ignore_eos is set, and two EOS ids (2 and 0) sit among the tokens of the stop string '北京' (6 bytes in "
        "UTF-8): they stay in the output and decode to '' (decode skips special tokens), so the stop string "
        "spans the last 7 tokens, more than its bytes",
        hint=IGNORED_EOS_MARGIN + (": your window of exactly len(s.encode()) tokens leaves none" if bytes_only else ""),
    )
    _three_ignored_eos_in_stop(fn)
    _ignored_eos_in_one_character(fn)


def _three_ignored_eos_in_stop(fn):
    """Three ignored EOS ids inside '1+2', whose every byte is its own token: the stop string spans
    3 + 3 = 6 tokens, the most the contract allows for 3 bytes. A window of len(s.encode()) + 2 tokens
    misses its first byte."""
    ids = _ids("x 1+2")
    out = ids[:3] + [2, 0] + ids[3:4] + [2] + ids[4:]  # '1', EOS, EOS, '+', EOS, '2'
    assert _decode(out) == "x 1+2" and _completes(out, "1+2") == (8, 6), "setup: '1+2' must span 6 tokens"
    req = _req(out, stop=["1+2"], ignore_eos=True)
    widest = _widest_decode(fn, _req(out, stop=["1+2"], ignore_eos=True))
    short = 3 <= widest < 6
    _expect(
        fn,
        req,
        "stop",
        "ignore_eos is set, and three EOS ids (2, 0, 2) sit among the tokens of the stop string '1+2' (3 bytes, "
        "one token each): they decode to '', so the stop string spans the last 6 tokens, its 3 bytes plus 3",
        hint=IGNORED_EOS_MARGIN
        + (
            f": your window of len(s.encode()) + {widest - 3} tokens leaves a margin too small for three ignored "
            "EOS ids (it needs + 3 at least)"
            if short
            else ""
        ),
    )


def _ignored_eos_in_one_character(fn) -> None:
    """ignore_eos, stop=['我'], and two EOS ids among the 3 byte tokens of '我': 'x 我' as
    [x, ' '+byte 1, EOS, byte 2, EOS, byte 3]. The stop string spans the last 5 tokens: a window of
    4 tokens a character misses it."""
    ids, out = _ids("x 我"), list(ONE_CHARACTER_OUT)
    assert (
        out == ids[:2] + [2] + ids[2:3] + [0] + ids[3:] and _decode(out) == "x 我" and _completes(out, "我") == (6, 5)
    ), "setup: '我' must span 5 tokens"
    try:
        _expect(
            fn,
            _req(out, stop=["我"], ignore_eos=True),
            "stop",
            "ignore_eos is set, and two EOS ids (2 and 0) sit among the 3 byte tokens of the stop string '我' "
            "(one character, 3 bytes in UTF-8): they stay in the output and decode to '', so the stop string spans "
            "the last 5 tokens, more than 4 per character",
            hint=IGNORED_EOS_MARGIN,
        )
    except Mistake as e:
        why = per_character_why(fn)
        if why:
            e.args = (f"{e}; {why}",)
            e.hint = PER_CHARACTER
        raise


def case_longest_stop_sets_window(fn):
    text, long = "one two three four five six seven", "two three four five six seven"
    ids = _ids(text)
    assert len(ids) == 7 and _spans(text, long) == 6, "setup: the long stop string must span 6 tokens"
    for stops in (["!", long], [long, "!"]):
        _expect(
            fn,
            _req(ids, stop=stops),
            "stop",
            f"stop={stops!r}: the output now ends with the second stop string, which spans {_spans(text, long)} "
            "tokens: every stop string must fit in what you decode, so size the window by the longest one",
        )
    for stops in (["}", long], [long, "}"]):  # '}' sorts after the long one: max(stops) is '}'
        _expect(
            fn,
            _req(ids, stop=stops),
            "stop",
            f"stop={stops!r}: the output now ends with {long!r}, which spans {_spans(text, long)} tokens beside '}}', "
            "a stop string of one byte: size the window by the longest one, whatever their order",
        )
    _expect(fn, _req(ids[:-1], stop=["!", long]), None, "'seven' has not come yet")
    _longest_in_bytes(fn)
    _window_not_whole(fn)


def _longest_in_bytes(fn) -> None:
    """' END' has more characters than '🚀🚀🚀' (4 to 3) but fewer bytes (4 to 12): a window sized by the
    stop string with the most characters, 4 bytes plus a margin, misses the rockets' 9 tokens."""
    ids = _ids("go 🚀🚀🚀 now")
    done, need = _completes(ids, "🚀🚀🚀")
    assert need > len(" END".encode()) + 4, "setup: '🚀🚀🚀' must span more tokens than ' END' has bytes, plus 4"
    for stops in ([" END", "🚀🚀🚀"], ["🚀🚀🚀", " END"]):
        _expect(
            fn,
            _req(ids[:done], stop=stops),
            "stop",
            f"stop={stops!r}: the output now holds '🚀🚀🚀', 3 characters but 12 bytes, spanning the last {need} "
            "tokens; ' END' has more characters (4) but fewer bytes (4): the window must hold the stop string with "
            "the most bytes",
        )


WHOLE_OUTPUT = (
    "decode a window of the newest tokens, sized by the longest stop string, never the whole output: the "
    "check runs after every token, and decoding all of it each time costs time that grows with the answer"
)


def _window_not_whole(fn) -> None:
    """A 120-token output and a one-character stop string: the contract's "must not decode the
    whole output each time" read plainly, the whole output in one call of `decode` fails."""
    output = _ids(" ok" * 120)
    calls: list[list[int]] = []
    fn(_req(output, max_new=500, stop=["!"]), set(EOS), noting_decode(calls))
    widest = max((len(ids) for ids in calls), default=0)
    if widest >= len(output):
        raise Mistake(
            f"after the {len(output)}th token, with stop=['!'] (one character), your check passed all "
            f"{widest} output ids to decode: the whole output, at every token",
            WHOLE_OUTPUT,
        )
