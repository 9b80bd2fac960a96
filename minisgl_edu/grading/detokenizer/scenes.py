"""Generated scenes for exercise 3 and its stretch: token streams of real text, with stop strings
taken from that text, fed to one or two detokenizers at once as the detokenizer worker does.

Where this sits in the course: the generated phase (grading/explore.py) of `detokenizer` and
`detokenizer_include_stop`. A scene is text built from pieces that stress the contract (CJK
characters and emoji of several byte tokens each, digits and words that merge into one token),
cut into the default model's real tokens, maybe with special tokens among them, maybe (base part)
with a byte token that is no character on its own, and maybe cut short in the middle of a
character (`max_tokens`); stop strings are stretches of that text (across
tokens, ending inside one, overlapping each other, false starts) or text it does not hold. Two
requests may stream at once, their tokens interleaved, each with its own object.

What is compared. The base part: the text each `add()` and the last `finish()` returned, request
by request; the contract fixes it exactly (whole characters that cannot begin a stop string go out
at once, nothing of a stop string ever does). The stretch lets a student hold back as the base part
does or release at once, so each stream is judged by the hand cases' own bounds (`_judge`: never
half a character, nothing past the cut, nothing held back for ever) and the pieces must join to
the reference's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from hypothesis import assume
from hypothesis import strategies as st

from minisgl_edu.grading.detokenizer.absent_in_min import ABSENT_IN_MIN, min_of_find_pieces
from minisgl_edu.grading.detokenizer.answer_start import START_KEPT, start_stripped
from minisgl_edu.grading.detokenizer.common import (
    EARLIEST_START,
    FINISH_REPEATS,
    FIRST_OCCURRENCE,
    HOLD_BACK,
    REPLACEMENT,
    SEARCH_ALL,
    WHOLE_CHARACTERS,
    _full,
    _piece,
    before_a_later_occurrence,
    last_occurrence,
    repeated_at_finish,
)
from minisgl_edu.grading.detokenizer.cut_from_sent import CUT_FROM_SENT, cut_from_sent_pieces
from minisgl_edu.grading.detokenizer.empty_window import check_empty_window
from minisgl_edu.grading.detokenizer.exact_case import CASE_SENSITIVE, changed_case, folded_at
from minisgl_edu.grading.detokenizer.find_end import FIND_END, find_end_pieces
from minisgl_edu.grading.detokenizer.last_token_before import LAST_TOKEN_BEFORE, last_token_pieces
from minisgl_edu.grading.detokenizer.negative_slice import NEGATIVE_SLICE, negative_slice_pieces
from minisgl_edu.grading.detokenizer.not_found_offset import NOT_FOUND_OFFSET, not_found_offset_pieces
from minisgl_edu.grading.detokenizer.one_early import ONE_EARLY, one_early_pieces
from minisgl_edu.grading.detokenizer.special_before import SPECIAL_BEFORE, special_before_pieces
from minisgl_edu.grading.detokenizer.special_flush import SPECIAL_FLUSH, flushed_at_special
from minisgl_edu.grading.detokenizer.stopped import STOPPED, went_on_after_the_stop
from minisgl_edu.grading.detokenizer.stripped_tail import STRIPPED_TAIL, stripped_pieces
from minisgl_edu.grading.detokenizer.whitespace_stop import WHITESPACE, dropped_whitespace
from minisgl_edu.grading.explore import Difference, generated
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.grading.pieces import PIECES, stop_strings

SPECIAL = [0, 1, 2]  # <|endoftext|>, <|im_start|>, <|im_end|>: decode to nothing with skip_special_tokens
# A byte token that is no UTF-8 character on its own: a model may sample it anywhere, and the whole
# decode shows it as '\ufffd' in the middle of the text, where it is text like any other (only a
# decode that *ends* in '\ufffd' may be a character still being cut)
STRAY_BYTE = 244


@dataclass
class Stream:
    ids: list[int]
    stop: list[str]


@dataclass
class DetokScene:
    streams: list[Stream]
    turns: list[int]  # which stream gets its next token, in order (the worker's interleaving)
    include: bool = False  # the stretch's include_stop_str_in_output


@st.composite
def _stream(draw: Any, whole_characters: bool = False) -> Stream:
    text = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5)))
    ids = tokenizer().encode(text)
    for _ in range(draw(st.integers(0, 1))):
        ids.insert(draw(st.integers(0, len(ids))), draw(st.sampled_from(SPECIAL)))
    if not whole_characters:  # (the stretch judges every piece free of '\ufffd')
        for _ in range(draw(st.integers(0, 1))):
            ids.insert(draw(st.integers(0, len(ids))), STRAY_BYTE)
    # max_tokens may cut it short, even inside a character (the base part's finish() then shows the
    # bytes it has, as the full decode does); the stretch's contract says nothing of that cut
    cuts = [n for n in range(1, len(ids) + 1) if not (whole_characters and _full(ids[:n]).endswith(REPLACEMENT))]
    ids = ids[: draw(st.sampled_from(cuts))]
    shown = _full(ids)
    # the window decode and the whole decode must agree on this text (no clean-up of spaces)
    assume(shown == tokenizer().decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False))
    # stop strings a student can read: none holding the stray byte's '\ufffd'
    stops = [s for s in draw(stop_strings(shown)) if REPLACEMENT not in s]
    if whole_characters:
        kinds = ["none", "two end in one token", "two end in one token", "twice in one token", "longer ends first"]
        kind = draw(st.sampled_from(kinds))
        if kind != "none":
            stops += draw(
                {"twice in one token": _twice_in_one_token, "longer ends first": _longer_ends_first}.get(
                    kind, _ending_in_one_token
                )(ids)
            )
    return Stream(ids, stops)


@st.composite
def _twice_in_one_token(draw: Any, ids: list[int]) -> list[str]:
    """A stop string that first shows up twice in the text one token adds ('e' of ' three', '!' of
    '!!!'): its first occurrence ends the stretch's answer, not its last."""
    k = draw(st.integers(1, len(ids)))
    before, upto = _full(ids[: k - 1]), _full(ids[:k])
    new = upto[len(before) :] if upto.startswith(before) else ""
    twice = sorted({new[i : i + n] for n in (1, 2) for i in range(len(new))} - {""})
    twice = [t for t in twice if new.count(t) >= 2 and t not in before and REPLACEMENT not in t]
    return [draw(st.sampled_from(twice))] if twice else []


@st.composite
def _ending_in_one_token(draw: Any, ids: list[int]) -> list[str]:
    """Two stop strings that one token completes at once, in either order (which one ends first
    decides the stretch's cut, not which is listed first or begins first)."""
    k = draw(st.integers(1, len(ids)))
    before, upto = len(_full(ids[: k - 1])), _full(ids[:k])
    if len(upto) <= before:
        return []
    ends = sorted(draw(st.lists(st.integers(before + 1, len(upto)), min_size=2, max_size=2)))
    pair = [upto[draw(st.integers(0, e - 1)) : e] for e in ends]
    return draw(st.permutations(pair))


@st.composite
def _longer_ends_first(draw: Any, ids: list[int]) -> list[str]:
    """Two stop strings that one token completes at once, the longer one ending first ('ne t' and
    'two' of ' two'): the stretch cuts after the one that ends first, not after the shortest."""
    k = draw(st.integers(1, len(ids)))
    before, upto = len(_full(ids[: k - 1])), _full(ids[:k])
    if len(upto) - before < 2 or len(upto) < 3:
        return []
    first_end = draw(st.integers(max(before + 1, 2), len(upto) - 1))
    last_end = draw(st.integers(first_end + 1, len(upto)))
    longer = upto[draw(st.integers(0, first_end - 2)) : first_end]
    shorter = upto[draw(st.integers(last_end - len(longer) + 1, last_end - 1)) : last_end]
    return draw(st.permutations([longer, shorter]))


@st.composite
def _one_inside_another(draw: Any, ids: list[int]) -> list[str]:
    """Two stop strings that one token completes at once, the one that begins first ending last
    ('e two' and 'tw' of ' two'): the base part cuts before the one that begins first."""
    k = draw(st.integers(1, len(ids)))
    before, upto = len(_full(ids[: k - 1])), _full(ids[:k])
    inner_end = draw(st.integers(max(before + 1, 2), max(before + 1, 2, len(upto) - 1)))
    if inner_end >= len(upto):
        return []
    inner_start = draw(st.integers(1, inner_end - 1))
    outer = upto[draw(st.integers(0, inner_start - 1)) : draw(st.integers(inner_end + 1, len(upto)))]
    return draw(st.permutations([upto[inner_start:inner_end], outer]))


@st.composite
def detok_scenes(draw: Any, stretch: bool = False) -> DetokScene:
    streams = draw(st.lists(_stream(whole_characters=stretch), min_size=1, max_size=2))
    tokens = [i for i, s in enumerate(streams) for _ in s.ids]
    turns = draw(st.permutations(tokens)) if len(streams) > 1 else tokens
    if not stretch and draw(st.booleans()):  # (drawn last: the scenes before it stay as they were)
        s = streams[draw(st.integers(0, len(streams) - 1))]
        s.stop += draw(_one_inside_another(s.ids))
    if not stretch and draw(st.booleans()):  # a stop string one token brings twice: cut before the first
        s = streams[draw(st.integers(0, len(streams) - 1))]
        s.stop += draw(_twice_in_one_token(s.ids))
    return DetokScene(streams, list(turns), draw(st.booleans()) if stretch else False)


def _feed(objs: list[Any], scene: DetokScene) -> list[list[str]]:
    """Each stream's tokens to its own object in the scene's order: the pieces of each stream, one
    per add(), then finish()'s."""
    pieces: list[list[str]] = [[] for _ in scene.streams]
    fed = [0] * len(scene.streams)
    for i in scene.turns:
        t = scene.streams[i].ids[fed[i]]
        fed[i] += 1
        pieces[i].append(_piece(objs[i].add(t), f"add({t})"))
    for i, obj in enumerate(objs):
        pieces[i].append(_piece(obj.finish(), "finish()"))
    return pieces


def _alone(scene: DetokScene, i: int) -> DetokScene:
    return DetokScene([scene.streams[i]], [0] * len(scene.streams[i].ids), scene.include)


def play_base(cls: Any, scene: DetokScene) -> dict:
    """Each request alone, the first one again in a new object, then all of them at once: a
    difference only in the last two is state shared between objects."""
    tok = tokenizer()
    out = {}
    for i, s in enumerate(scene.streams):
        (out[f"request {'AB'[i]}: the text of each add(), then finish()"],) = _feed(
            [cls(tok, list(s.stop))], _alone(scene, i)
        )
    first = scene.streams[0]
    (out[AGAIN],) = _feed([cls(tok, list(first.stop))], _alone(scene, 0))
    if len(scene.streams) > 1:
        together = _feed([cls(tok, list(s.stop)) for s in scene.streams], scene)
        for i, p in enumerate(together):
            out[f"request {'AB'[i]}, both streaming at once: the text of each add(), then finish()"] = p
    return out


def play_base_named(cls: Any, scene: DetokScene) -> dict:
    """play_base, and when the answer crashes, `check_empty_window`: an IndexError on a window that
    decodes to no text is named (confirmed by a probe), others keep Python's own words."""
    try:
        return play_base(cls, scene)
    except IndexError as e:
        check_empty_window(cls, e)
        raise


def play_stretch(cls: Any, scene: DetokScene, reference: Any, judge: Callable[..., None]) -> dict:
    """`judge(pieces, ids, stop, include, expected, cls)` raises a Mistake for a stream out of bounds
    (`cls` for the diagnoses that probe the answer on a stream of their own)."""
    tok = tokenizer()
    pieces = _feed([cls(tok, list(s.stop), scene.include) for s in scene.streams], scene)
    out = {}
    for i, s in enumerate(scene.streams):
        ref = reference(tok, list(s.stop), scene.include)
        expected = "".join([ref.add(t) for t in s.ids] + [ref.finish()])
        judge(pieces[i], s.ids, s.stop, scene.include, expected, cls)  # the bounds, in the hand cases' words
        out[f"request {'AB'[i]}: the pieces joined"] = "".join(pieces[i])
    return out


def show(scene: DetokScene) -> str:
    lines = []
    for i, s in enumerate(scene.streams):
        lines.append(
            f"  request {'AB'[i]}: tokens {s.ids} (each: {' '.join(repr(_full([t])) for t in s.ids)}), "
            f"text {_full(s.ids)!r}, stop={s.stop!r}"
        )
    if len(scene.streams) > 1:
        lines.append(f"  tokens arrive in the order {''.join('AB'[i] for i in scene.turns)}, each to its own object")
    if scene.include:
        lines.append("  include_stop_str_in_output=True")
    return "\n".join(lines)


STRAY = (
    "a '\\ufffd' inside the text (a byte the model sampled that is no character) is text like any other: only a "
    "decode that ends with '\\ufffd' may be a character still being cut, so test the end, not the whole window"
)
AGAIN = "request A again, in a new object: the text of each add(), then finish()"
SELF = "keep all state on self, set in __init__: the worker builds one object per request, several stream at once"


def _cut_at_the_first_to_end(stream: Stream) -> Optional[tuple[int, str]]:
    """(index of the token, text) for an answer that holds back right but, where that token completes
    stop strings, cuts before the one that ends first (the base part cuts before the one that begins
    first); None without a stop string."""
    for k in range(1, len(stream.ids) + 1):
        text = _full(stream.ids[:k])
        found = [(text.find(s) + len(s), text.find(s)) for s in stream.stop if s and s in text]
        if found:
            return k - 1, text[: min(found)[1]]
    return None


def _cut_at_a_later_occurrence(stream: Stream, got: list[str]) -> bool:
    """The pieces are cut right before a later occurrence of a stop string they show, or are the
    pieces of the package's detokenizer with str.rfind for str.find (`last_occurrence`)."""
    if before_a_later_occurrence("".join(got), _full(stream.ids), stream.stop):
        return True
    detok = last_occurrence(tokenizer(), list(stream.stop))
    return got == [detok.add(t) for t in stream.ids] + [detok.finish()]


def _begins_where_the_search_begins(stream: Stream, k: int, want: list[str]) -> str:
    """Where the right cut is at the first character not yet returned (the expected pieces before
    token k+1 show all the answer) and a stop string completed by that token begins there: words
    that say so (str.find returns that position, 0 at the start of the text, a match); else ''."""
    decoded, p = _full(stream.ids[: k + 1]), len("".join(want))
    at = [s for s in stream.stop if s and decoded.startswith(s, p)]
    if not at or len("".join(want[:k])) != p:
        return ""
    return (
        f"; here {at[0]!r}, which begins at character {p}, the first character not yet returned: str.find gives "
        f"{p} for it, and that is a match (only -1 means not found)"
    )


def _passed_over(stream: Stream, got: list[str]) -> str:
    """The hint for a stop string passed over: dropped for being whitespace only, lost to an absent
    one's -1 in min(), or begun by whitespace that a hold-back test on stripped text let out. The pieces
    are compared with those of each mistake; where more than one gives them, the hint names each."""
    ids, stop = stream.ids, stream.stop
    # (the hint alone, how it begins when it follows another) of each mistake the pieces match
    found = [
        (hint, lead)
        for hint, lead, same in (
            (WHITESPACE, "", dropped_whitespace(ids, stop, got)),
            (ABSENT_IN_MIN, "if you take min() of find's results: ", min_of_find_pieces(ids, stop, got)),
            (STRIPPED_TAIL, "if you test the tail with .rstrip(): ", stripped_pieces(ids, stop, got)),
        )
        if same
    ]
    if len(found) == 1:
        return found[0][0]
    return ". Or, ".join(lead + hint if i else hint for i, (hint, lead) in enumerate(found))


def _whole_stream_hint(stream: Stream, want: list[str], got: list[str]) -> str:
    """The hint of a mistake read off the whole stream, or '': its pieces are exactly those of the
    package's detokenizer with `before` decoded keeping special tokens or from the last read token
    alone, with find()'s -1 plus the offset of the slice searched taken for a hit, with find()'s end at
    -1 (the last character never searched), or with the cut one before the stop string; or it joins to
    the text less its leading whitespace."""
    if got != want and got == special_before_pieces(stream.ids, stream.stop):
        return SPECIAL_BEFORE
    if got != want and last_token_pieces(stream.ids, stream.stop, got):
        return LAST_TOKEN_BEFORE
    if not_found_offset_pieces(stream.ids, stream.stop, got):
        return NOT_FOUND_OFFSET
    if find_end_pieces(stream.ids, stream.stop, got):
        return FIND_END
    if one_early_pieces(stream.ids, stream.stop, got):
        return ONE_EARLY
    return START_KEPT if start_stripped("".join(got), "".join(want)) else ""


def pieces_hint(scene: DetokScene, diff: Difference) -> str:
    """The mistake a stream's pieces show, read at the first piece where they part."""
    want, got = list(diff.expected), list(diff.got)
    k = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    shown_want, shown_got = "".join(want[: k + 1]), "".join(got[: k + 1])
    stream = scene.streams["AB".index(diff.field[8])]
    whole = _whole_stream_hint(stream, want, got)
    if whole:
        return whole
    if flushed_at_special(stream.ids, want, got):  # (before the '\ufffd' test: it may flush half a character)
        return SPECIAL_FLUSH
    if REPLACEMENT in shown_got and REPLACEMENT not in shown_want:
        # half a character shown (not a stray byte of the text, which the whole decode shows too)
        if not _full(stream.ids).startswith(shown_got) or _full(stream.ids[: k + 1]).endswith(REPLACEMENT):
            return WHOLE_CHARACTERS
    if len(shown_got) < len(shown_want) and shown_want.startswith(shown_got):
        decoded = _full(stream.ids[: k + 1])
        s = folded_at(decoded, len(shown_got), stream.stop)
        if s:
            return f"{CASE_SENSITIVE}. Here {changed_case(decoded, len(shown_got), s)}"
    passed_over = _passed_over(stream, got)
    if passed_over:
        return passed_over
    if went_on_after_the_stop(got, stream.ids, stream.stop, "".join(want)):
        return STOPPED
    if "".join(got) != "".join(want) and (k, "".join(got)) == _cut_at_the_first_to_end(stream):
        return EARLIEST_START + _begins_where_the_search_begins(stream, k, want)
    if "".join(got) != "".join(want) and _cut_at_a_later_occurrence(stream, got):
        return FIRST_OCCURRENCE
    if "".join(got) != "".join(want) and got == cut_from_sent_pieces(stream.ids, stream.stop):
        return CUT_FROM_SENT  # the gap since the last piece lost: the stop's position counted from sent
    # text out only where a tail is held back (with none, add() streams nothing: no telling it from that)
    if any(got[:-1]) and got == negative_slice_pieces(stream.ids, stream.stop):
        return NEGATIVE_SLICE
    if len(shown_got) > len(shown_want) and shown_got.startswith(shown_want):
        extra = shown_got[len(shown_want) :]
        if any(s in shown_got for s in stream.stop):
            return SEARCH_ALL + "; cut at the earliest stop string and show nothing after it"
        # the stop strings the reference held its tail back for (the text decoded by this add()
        # that it has not shown), else those the text shown too early belongs to
        decoded = _full(stream.ids[: k + 1])
        held = decoded[len(shown_want) :]
        begun = [s for s in stream.stop if held and s.startswith(held)]
        theirs = decoded[len(shown_got) :]  # what the answer held back: a shorter start of the same one
        if theirs and held.endswith(theirs) and any(s.startswith(theirs) for s in begun):
            return f"{HOLD_BACK}: the longest tail that could begin one (here {held!r}), not a shorter one"
        # the start of another stop string: the shortest of all, or the longest of the first one's
        starts = [k for s in stream.stop for k in range(1, min(len(s), len(held) + 1)) if held.endswith(s[:k])]
        firsts = [k for k in range(1, min(len(stream.stop[0]), len(held) + 1)) if held.endswith(stream.stop[0][:k])]
        if theirs and held.endswith(theirs) and len(theirs) == min(starts, default=0):
            also = ", and not only for the first" if len(theirs) == max(firsts, default=0) else ""
            return (
                f"{HOLD_BACK}: the longest tail that could begin any of them (here {held!r}), not a shorter one{also}"
            )
        # a start held while it fit in one token's text, let go once it grows over two: the reference
        # holds a tail longer than the newest token's text, the answer at most that text
        newest = len(decoded) - len(_full(stream.ids[:k])) if k < len(stream.ids) else 0
        if begun and 0 < newest < len(held) and len(theirs) <= newest:
            return (
                f"{HOLD_BACK} even when it begins before the newest token's text (here {held!r}, which begins "
                f"before {decoded[-newest:]!r}): look for the start of a stop string in all the text not yet returned, not "
                "only in the newest token's text"
            )
        if begun and not theirs and held == decoded[len("".join(want[:k])) :]:
            return (
                f"{HOLD_BACK}, even when it is all the text not yet returned (here {held!r}): try every length "
                "up to len(unsent), that length included"
            )
        begun = begun or [s for s in stream.stop if s.startswith(extra) or extra in s]
        if begun and stream.stop[0] not in begun:
            return HOLD_BACK + " of the list, any of them, not only the first"
        if begun:
            return HOLD_BACK
    if k == len(want) - 1 and repeated_at_finish(got, "".join(want)):
        return FINISH_REPEATS
    if k == len(want) - 1 and "".join(got) != "".join(want):
        return "finish() returns what is still held back (whole or not: the request has ended), minus a stop string"
    if len(shown_got) < len(shown_want) and REPLACEMENT in shown_want[len(shown_got) : -1]:
        return STRAY
    if len(shown_got) < len(shown_want):
        return "release each whole character as soon as it cannot begin a stop string: the client should not wait"
    return "the pieces must join to the whole decode, cut before the earliest stop string"


JOINED = (
    "the pieces join to the whole decode, cut after the first stop string to complete with the flag, before it without"
)


def detokenizer_case(reference: Any, judge: Optional[Callable[..., None]] = None, examples: int = 100) -> Any:
    """The generated case of `detokenizer`, or with the stretch's `judge`, of `detokenizer_include_stop`."""
    if judge is not None:
        return generated(
            f"stretch: generated: {examples} streams, with and without the flag",
            detok_scenes(stretch=True),
            lambda cls, scene: play_stretch(cls, scene, reference, judge),
            show,
            reference,
            {f"request {c}: the pieces joined": JOINED for c in "AB"},
            examples,
            hint="cut right after the first stop string to complete with the flag, before it without",
        )
    hints = {f"request {c}: the text of each add(), then finish()": pieces_hint for c in "AB"}
    hints[AGAIN] = SELF
    hints.update({f"request {c}, both streaming at once: the text of each add(), then finish()": SELF for c in "AB"})
    return generated(
        f"generated: {examples} streams, one or two at once",
        detok_scenes(),
        play_base_named,
        show,
        reference,
        hints,
        examples,
        hint="whole characters out at once, nothing of a stop string ever",
        fixed=[_case_changed()],
    )


def _case_changed() -> DetokScene:
    """A scene played before the drawn ones: 'one two three four five' with stop=['Three Four'], a
    stretch of the text with its case changed, which is no stop string of it (the drawn stop strings
    are the text's own, as written)."""
    ids = [537, 827, 1296, 1876, 2531]  # 'one', ' two', ' three', ' four', ' five' in the default model's vocabulary
    return DetokScene([Stream(ids, ["Three Four"])], [0] * len(ids))
