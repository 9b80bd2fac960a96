"""Diagnoses for exercise 1 and its stretch: the answer re-run on a variant of a request where it
went wrong, to tell which mistake it made, so that the hint names that mistake and no other.

Each function takes the answer (`fn`, called as the scheduler calls it; `*extra` is min_tokens for
the stretch) and says whether it makes one mistake. The hand cases (base.py, min_tokens.py) and the
generated phase (scenes.py: reason_hint) both use them. A probe that raises counts as "not this
mistake": the hint then stays the general one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from minisgl_edu.core import Req
from minisgl_edu.grading.finish.min_probes import UNREACHABLE_MIN, ends_unreachable_min
from minisgl_edu.grading.finish.tokens import EOS, PLAIN, _decode, _ids, _req, noting_decode

CASE_SENSITIVE = (
    "match the stop strings exactly, case-sensitively, as `s in tail`: 'Four' in the text is not the stop "
    "string 'four' (never lower() or casefold() the text or the stop strings)"
)


def folds_case(fn: Any, *extra: Any) -> bool:
    """The answer stops on the output 'Four score and' for stop ['four'], yet not for stop ['five'],
    which the text does not hold in any case: it matches stop strings ignoring case."""
    ids = _ids("Four score and")
    try:
        found = fn(_req(ids, stop=["four"]), set(EOS), _decode, *extra) == "stop"
        return found and fn(_req(ids, stop=["five"]), set(EOS), _decode, *extra) is None
    except Exception:
        return False


NORMALIZED = (
    "match the stop strings code point for code point, as `s in tail`: 'e' followed by U+0301 (a combining "
    "accent) is not the one code point 'é' (U+00E9), though both print as é, and the detokenizer cuts the text "
    "only where the stop string itself occurs (never unicodedata.normalize() the text or the stop strings)"
)


def normalizes_unicode(fn: Any, *extra: Any) -> bool:
    """The answer stops on the output ' cafe\u0301 ok' ('e' + a combining accent) for stop ['café'] (é one
    code point), yet not on ' cafe ok' for that stop: it matches after a Unicode normalization (NFC, NFD,
    NFKC), not code point for code point. The second probe tells it from an answer that drops accents."""
    try:
        found = fn(_req(_ids(" cafe\u0301 ok"), stop=["caf\u00e9"]), set(EOS), _decode, *extra) == "stop"
        return found and fn(_req(_ids(" cafe ok"), stop=["caf\u00e9"]), set(EOS), _decode, *extra) is None
    except Exception:
        return False


def differs_in_case_only(stop: list[str], text: str) -> bool:
    """A stop string of the list is in `text` ignoring case, and none is there as it is."""
    return not any(s in text for s in stop) and any(s.casefold() in text.casefold() for s in stop)


EOS_WITH_STOPS = (
    "an EOS ends a request that has stop strings too: test req.output_ids[-1] against eos_ids for every request "
    "(unless ignore_eos), whether sampling_params.stop is empty or not; the stop strings are a second test of "
    "their own, not an alternative to the EOS test"
)


def eos_skipped_with_stops(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """req's newest token is an EOS (ignore_eos unset) and req has stop strings; the answer goes on,
    yet finishes the same output with stop=[]: it tests EOS only for a request without stop strings."""
    sp = req.sampling_params
    if not req.output_ids or req.output_ids[-1] not in eos_ids or sp.ignore_eos or not sp.stop:
        return False

    def probe(stop: list[str]) -> Any:
        fresh = replace(req, sampling_params=replace(sp, stop=list(stop)), output_ids=list(req.output_ids))
        return fn(fresh, set(eos_ids), _decode, *extra)

    try:
        return probe(sp.stop) in (None, "length") and probe([]) == "stop"
    except Exception:
        return False


COUNT_GATE = (
    "test the stop strings after every token, from the first one: a single token can carry a whole stop "
    "string (' three' is one token for 5 characters), so never wait until the output has as many tokens as a "
    "stop string has characters or bytes"
)
SILENT = (1, 3, 4, 5)  # special tokens that decode to '' (skip_special_tokens), not EOS of SmolLM2


def count_gate(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> int:
    """How many tokens that decode to nothing, put in front of req's output, make the answer find the
    stop string it missed (the limits, and min_tokens, raised by as many, so nothing else changes):
    the answer skips the stop-string test while the output has few tokens. 0 when it does not."""
    stop = req.sampling_params.stop
    silent = next((t for t in SILENT if t not in eos_ids), None)
    if not stop or silent is None:
        return 0
    pad = 2 * max(len(s.encode()) for s in stop) + 8
    sp = replace(req.sampling_params, max_tokens=req.sampling_params.max_tokens + pad)
    padded = replace(
        req,
        sampling_params=sp,
        output_ids=[silent] * pad + list(req.output_ids),
        max_new_tokens=req.max_new_tokens + pad,
    )
    same = replace(req, sampling_params=replace(req.sampling_params), output_ids=list(req.output_ids))
    more = tuple(m + pad for m in extra)
    try:
        missed = fn(same, set(eos_ids), _decode, *extra) in (None, "length")
        return pad if missed and fn(padded, set(eos_ids), _decode, *more) == "stop" else 0
    except Exception:
        return 0


LENGTH_ONE_LATE = (
    "below min_tokens the length test is check_finish's: 'length' once len(req.output_ids) >= "
    "req.max_new_tokens (not >); with > the request gets one token more than max_tokens allows"
)


def length_one_late(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """The answer goes on at req's last allowed token, yet answers 'length' for the same output under a
    limit one token lower: it tests the length with > where >= is due (one token late)."""
    if req.max_new_tokens < 2:
        return False
    lower = replace(req, sampling_params=replace(req.sampling_params), max_new_tokens=req.max_new_tokens - 1)
    same = replace(req, sampling_params=replace(req.sampling_params), output_ids=list(req.output_ids))
    lower.output_ids = list(req.output_ids)
    try:
        return fn(same, set(eos_ids), _decode, *extra) is None and fn(lower, set(eos_ids), _decode, *extra) == "length"
    except Exception:
        return False


LENGTH_WITH_STOPS = (
    "the length limit ends a request that has stop strings too: when none of them is in the tail, go on to the "
    "length test instead of returning None from the stop-string branch (`return 'stop' if any(...) else None` "
    "skips it); 'length' once len(req.output_ids) >= req.max_new_tokens, for every request"
)


def length_skipped_with_stops(fn: Any, *extra: Any) -> bool:
    """The answer goes on at the last allowed token of ' ok ok ok' (max_new_tokens=3) with the stop string
    'xyz', which the text does not hold, yet answers 'length' for the same output without stop strings:
    it tests the length only for a request that has none. (`*extra` is min_tokens, 0 for the stretch.)"""
    out = [PLAIN] * 3
    try:
        with_stop = fn(_req(out, max_new=3, stop=["xyz"]), set(EOS), _decode, *extra)
        return with_stop is None and fn(_req(out, max_new=3), set(EOS), _decode, *extra) == "length"
    except Exception:
        return False


def last_allowed_hint(fn: Any, n: int, cap: int, *extra: Any) -> str:
    """The generated phase's hint where the answer goes on at output token n, the last allowed
    (req.max_new_tokens=cap): the mistake a probe of its own confirms, the length skipped for a request
    with stop strings or tested with > (one token late), else the rule alone."""
    where = f"output token {n} is the last allowed, req.max_new_tokens={cap}"
    if length_skipped_with_stops(fn, *extra):
        return f"{where}, and no stop string is in the text: {LENGTH_WITH_STOPS}"
    if length_one_late(fn, _req([PLAIN] * 3, max_new=3), set(EOS), *extra):
        return f"{where}: 'length' once len(req.output_ids) == req.max_new_tokens (>=, not >)"
    return f"{where}: 'length' once len(req.output_ids) >= req.max_new_tokens, whatever else the request holds"


def counts_the_prompt(fn: Any, *extra: Any) -> bool:
    """The answer returns 'length' for 1 output token of max 3 behind the prompt 'Count for me.' (4 tokens),
    yet None behind the 1-token prompt 'Hi': its length counts the prompt's tokens too."""
    try:
        long, short = (
            fn(_req([PLAIN], max_new=3, prompt=p), set(EOS), _decode, *extra) for p in ("Count for me.", "Hi")
        )
        return long == "length" and short is None
    except Exception:
        return False


def early_length_hint(fn: Any, n: int, cap: int, prompt: str, min_tokens: Any) -> str:
    """The generated phase's hint where the answer says 'length' at output token n, below req.max_new_tokens
    (cap): the mistake a probe of its own confirms, the prompt counted or (stretch) a minimum above the limit
    that ends the request at once, else the rule alone."""
    if min_tokens is not None and min_tokens > cap and ends_unreachable_min(fn):
        return f"min_tokens={min_tokens} is above req.max_new_tokens={cap}: " + UNREACHABLE_MIN
    if counts_the_prompt(fn, *([0] if min_tokens is not None else [])):
        return (
            f"{n} output tokens are below req.max_new_tokens={cap}, with the prompt's {len(_ids(prompt))} tokens "
            "they are not: max_new_tokens counts len(req.output_ids) only, not the prompt"
        )
    return f"{n} output tokens are below req.max_new_tokens={cap}: 'length' only once len(req.output_ids) >= it"


LENGTH_BEFORE_STOP = (
    "test 'stop' before 'length': a token that is an EOS (or completes a stop string) and also the last one "
    "allowed ends the request with 'stop', since the model ended the answer itself; answer 'length' only when "
    "no 'stop' holds"
)


def length_before_stop(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """The answer returns 'length' for req, whose newest token is its last allowed one, yet 'stop' for the
    same output under a limit far away: it tests the length before EOS and the stop strings."""
    far = len(req.output_ids) + 100
    same = replace(req, sampling_params=replace(req.sampling_params), output_ids=list(req.output_ids))
    away = replace(req, sampling_params=replace(req.sampling_params, max_tokens=far), output_ids=list(req.output_ids))
    away.max_new_tokens = far
    try:
        return fn(same, set(eos_ids), _decode, *extra) == "length" and fn(away, set(eos_ids), _decode, *extra) == "stop"
    except Exception:
        return False


WINDOW_NOT_FROM_THIS_REQUEST = (
    "size the window on every call from this request's own stop strings (the longest one's len(s.encode()) plus "
    "a margin): a window worked out once and kept from an earlier request or call (a global, a default argument, "
    "an attribute), or of a fixed size, is too short for a request whose stop strings are longer"
)


def window_ignores_stops(fn: Any, *extra: Any) -> int:
    """The tokens the answer decodes at once (its widest decode call) on 100 ' ok' tokens, when that is
    the same for stop=['!'] (1 byte), for a stop string of 60 bytes in one word and for one of 30 words,
    and shorter than 60: its window does not follow the request's stop strings (kept from an earlier
    request, or fixed). 0 when it does, or when that window is one token (the newest token alone) or 60
    tokens or more (the whole output): other mistakes, with their own hints. The 30 words keep a window
    counted in words (window_words.py) out of this one."""
    widths = []
    for stop in ("!", "~" * 60, " a" * 30):
        calls: list[list[int]] = []
        try:
            fn(_req([PLAIN] * 100, max_new=500, stop=[stop]), set(EOS), noting_decode(calls), *extra)
        except Exception:
            return 0
        widths.append(max((len(ids) for ids in calls), default=0))
    return widths[0] if len(set(widths)) == 1 and 1 < widths[0] < 60 else 0


MOST_CHARACTERS = (
    "pick the longest stop string by bytes, not by characters: max(stop, key=len) picks the one with the most "
    "characters, and a CJK or emoji string beside it with fewer characters can have more bytes ('🚀🚀🚀': 3 "
    "characters, 12 bytes) and span more tokens than that window holds; size the window by "
    "max(len(s.encode()) for s in stop), plus a margin"
)


def window_of_most_characters(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """The answer finds the stop string s of req's list that the output holds when it is alone in the list,
    misses it beside a string of '~' as long in characters as the list's longest (more characters than s,
    fewer bytes), in either order, yet finds it beside a one-character string and beside one of more
    characters and more bytes: its window follows the stop string with the most characters."""
    text = _decode(req.output_ids)
    found = [s for s in req.sampling_params.stop if s in text and len(s) >= 2]
    if not found or "~" in text:
        return False
    s = max(found, key=lambda f: len(f.encode()))
    chars = max(len(t) for t in req.sampling_params.stop)
    if not len(s) < chars < len(s.encode()):
        return False

    def probe(stop: list[str]) -> Any:
        sp = replace(req.sampling_params, stop=list(stop))
        return fn(replace(req, sampling_params=sp, output_ids=list(req.output_ids)), set(eos_ids), _decode, *extra)

    wide, wider = "~" * chars, "~" * (len(s.encode()) + 1)
    try:
        found_alone = all(probe(stop) == "stop" for stop in ([s], ["~", s], [s, "~"], [wider, s], [s, wider]))
        return found_alone and all(probe(stop) in (None, "length") for stop in ([wide, s], [s, wide]))
    except Exception:
        return False


ALPHABETICAL_MAX = (
    "max() of strings is the one that sorts last alphabetically, not the longest: max(['}', 'two three']) is '}'; "
    "size the window by the stop string with the most bytes, max(len(s.encode()) for s in stop), plus a margin"
)
SIX_TOKENS = "two three four five six seven"  # the last 6 tokens of 'one two three four five six seven'


def window_of_alphabetical_max(fn: Any, *extra: Any) -> bool:
    """The answer finds SIX_TOKENS at the end of its output beside '!' (which sorts before it), in either
    order, but not beside '}' (which sorts after it), one byte each: its window follows max(stop), the
    stop string that sorts last, which is '}' there and leaves a window too short for the long one."""
    ids = _ids("one " + SIX_TOKENS)

    def probe(stop: list[str]) -> Any:
        return fn(_req(ids, stop=stop), set(EOS), _decode, *extra)

    try:
        before = all(probe(stop) == "stop" for stop in (["!", SIX_TOKENS], [SIX_TOKENS, "!"]))
        return before and all(probe(stop) in (None, "length") for stop in (["}", SIX_TOKENS], [SIX_TOKENS, "}"]))
    except Exception:
        return False


BROKEN_CHARACTER = (
    "search the decoded tail even when it holds '\\ufffd' (U+FFFD): a window of whole tokens can start or end "
    "inside a character (a CJK character or emoji spans several byte tokens), and decode shows that cut "
    "character as U+FFFD; the stop string is still in the rest of the text, so never skip the stop-string "
    "test because the tail holds one"
)


def skips_broken_tail(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> bool:
    """The answer misses the stop string in req's output, yet finds it when decode writes each cut
    character as '\\x00' instead of U+FFFD (nothing else changes, and no stop string holds either):
    it skips the stop-string test when the decoded tail holds a replacement character."""
    ids, stop = list(req.output_ids), req.sampling_params.stop
    if not stop or any("\ufffd" in s or "\x00" in s for s in stop):
        return False
    if not any("\ufffd" in _decode(ids[i:]) for i in range(len(ids))):
        return False

    def marked(part: list[int]) -> str:
        return _decode(part).replace("\ufffd", "\x00")

    def fresh() -> Req:
        return replace(req, sampling_params=replace(req.sampling_params), output_ids=list(ids))

    try:
        missed = fn(fresh(), set(eos_ids), _decode, *extra) in (None, "length")
        return missed and fn(fresh(), set(eos_ids), marked, *extra) == "stop"
    except Exception:
        return False


MIN_IN_TOKENS = (
    "min_tokens counts output tokens: hold EOS and stop strings back while len(req.output_ids) < min_tokens, "
    "never by the length of the decoded text (characters, bytes or words), which a token can make longer by "
    "several characters or by none"
)
LONG = 1296  # ' three': one token of 6 characters


def min_in_text(fn: Any) -> str:
    """How the answer's minimum follows the decoded text, not the output tokens: of two outputs with as
    many tokens, ending in an EOS, one of ' three' tokens and one of tokens that decode to '' (special
    tokens), it finishes one and holds the other back. '' when it treats them alike."""
    silent = SILENT[0]

    def probe(ids: list[int], min_tokens: int) -> Any:
        return fn(_req(ids), set(EOS), _decode, min_tokens)

    try:
        if probe([LONG, 2], 3) == "stop" and probe([silent, 2], 3) is None:
            return (
                "With 2 output tokens and min_tokens=3 your check finishes ' three' + EOS (6 characters), yet holds "
                "back the same 2 tokens when they decode to '': your minimum follows the decoded text"
            )
        if probe([silent] * 4 + [2], 3) in (None, "length") and probe([LONG] * 4 + [2], 3) == "stop":
            return (
                "With 5 output tokens and min_tokens=3 your check finishes ' three three three three' + EOS, yet holds "
                "back 5 tokens that decode to '' (special tokens): your minimum follows the decoded text"
            )
    except Exception:
        return ""
    return ""


IGNORED_EOS_TIE = (
    "under ignore_eos an EOS is ordinary text, on the last allowed token too: the request ran to its limit, so "
    "answer 'length' there, never 'stop'; 'stop' wins the tie only for an EOS that counts (ignore_eos unset)"
)


def ignored_eos_ties(fn: Any, *extra: Any) -> bool:
    """Under ignore_eos the answer goes on at an EOS away from the limit and answers 'length' at the limit
    for a plain token, yet 'stop' when the last allowed token is an EOS: its tie rule ('stop' beats
    'length') tests the EOS without ignore_eos."""

    def probe(output: list[int], max_new: int) -> Any:
        return fn(_req(output, max_new=max_new, ignore_eos=True), set(EOS), _decode, *extra)

    try:
        away, plain = probe([PLAIN, 2], 5), probe([PLAIN, PLAIN], 2)
        return away is None and plain == "length" and probe([PLAIN, 2], 2) == "stop"
    except Exception:
        return False


FIRST_STOPS_ONLY = (
    "look for every string of sampling_params.stop, however long the list: this engine sets no limit on how many "
    "stop strings a request has (the OpenAI API's four is not part of the contract), so never slice it (stop[:4])"
)
PLACES = 8  # the length of the probe's stop list


def stops_read(fn: Any, req: Req, eos_ids: set[int], *extra: Any) -> int:
    """How many stop strings from the front of the list the answer reads: it finds the stop string that
    req's output holds at each of the first k places of a list of PLACES (the others absent from the
    text and shorter), and at none of the places after. 0 when it does not read a fixed number."""
    text = _decode(req.output_ids)
    found = [s for s in req.sampling_params.stop if s in text]
    fillers = [f"~{i}" for i in range(PLACES - 1)]
    if not found or any(f in text for f in fillers):
        return 0

    def probe(place: int) -> bool:
        stop = fillers[:place] + [found[0]] + fillers[place:]
        sp = replace(req.sampling_params, stop=stop)
        fresh = replace(req, sampling_params=sp, output_ids=list(req.output_ids))
        return fn(fresh, set(eos_ids), _decode, *extra) == "stop"

    try:
        seen = [probe(place) for place in range(PLACES)]
    except Exception:
        return 0
    k = seen.index(False) if False in seen else PLACES
    return k if 0 < k < PLACES and not any(seen[k:]) else 0
