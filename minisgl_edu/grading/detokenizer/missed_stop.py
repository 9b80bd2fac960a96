"""Exercise 3's stretch: which known mistake made a search miss a stop string, found by playing the
reference with that one mistake (stop_keeping.py) and comparing the pieces, or by a small probe of
the answer on 'one two' or 'one two three'. `_not_how_it_begins` and `_leaked` in include_stop.py
ask these when text after the stop string leaked, so the hint names the mistake the answer made.
"""

from __future__ import annotations

from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.detokenizer.stop_keeping import (
    _late_start,
    _no_look_back,
    _shortest_look_back,
    _slice_relative,
    _unclamped_start,
)
from minisgl_edu.grading.harness import tokenizer


def _stream(cls, ids: list[int], stop, include: bool) -> list[str]:
    return pieces_of(cls(tokenizer(), list(stop), include), ids)


SHORTEST_LOOK_BACK = "look back len(s) - 1 characters for each stop string s, not the shortest one's for all"
# Skipping a stop string while its start is negative and passing that start to find raw miss exactly the
# same stop strings (a window of fewer than len(s) characters at the end holds none): the hint names both.
NEGATIVE_START = (
    "clamp the search window's start at 0, text.find(s, max(0, sent - len(s) + 1)): early in the stream that "
    "start is below 0, and the stop string must still be searched for, from character 0. Neither skip it until "
    "enough text has come, nor pass the negative start to find: a negative start counts from the end of the string"
)


def _missed_by_a_negative_start(pieces: list[str], ids: list[int], stop: list[str], expected: str) -> bool:
    """The pieces join to what the reference gives with its search start left unclamped (_unclamped_start),
    which here is not the answer. An answer that skips the stop string while that start is negative
    gives the same pieces: the unclamped window is the last len(s) - 1 - sent characters, too few."""
    mine = "".join(_stream(_unclamped_start, ids, stop, True))
    return mine != expected and "".join(pieces) == mine


def _missed_by_the_shortest_look_back(pieces: list[str], ids: list[int], stop: list[str], expected: str, cls) -> bool:
    """The pieces join to what _shortest_look_back gives, which is neither the answer nor _no_look_back's,
    and the probe `_looks_back_the_shortest_distance` shows the answer does so."""
    if len({len(s) for s in stop if s}) < 2:
        return False
    mine = "".join(_stream(_shortest_look_back, ids, stop, True))
    none = "".join(_stream(_no_look_back, ids, stop, True))
    return mine not in (expected, none) and "".join(pieces) == mine and _looks_back_the_shortest_distance(cls)


def _looks_back_the_shortest_distance(cls) -> bool:
    """On 'one two three' (tokens 'one', ' two', ' three') the answer finds 'one t', begun in 'one', when
    it is the only stop string, but misses it once the 2-character 'zz' is listed too: its look-back is
    the shortest stop string's, 1 character, for all of them."""
    if cls is None:
        return False
    ids = tokenizer().encode("one two three")
    try:
        kept = ["".join(_stream(cls, ids, stop, True)) for stop in (["one t"], ["one t", "zz"])]
    except Exception:
        return False
    return kept == ["one t", "one two three"]


LATE_START = (
    "start the search len(s) - 1 characters before the text not yet returned, max(0, sent - len(s) + 1), not one "
    "character later: a stop string may begin right there (a 1-character one at the first character not yet "
    "returned)"
)


def _missed_by_a_late_start(pieces: list[str], ids: list[int], stop: list[str], cls) -> bool:
    """The answer starts its search one character late (`_searches_one_late`), and that explains
    these pieces: they join to what _late_start gives on the same stream."""
    mine = "".join(_stream(_late_start, ids, stop, True))
    return "".join(pieces) == mine and _searches_one_late(cls)


def _searches_one_late(cls) -> bool:
    """On 'one, two' (tokens 'one', ',', ' two') the answer misses ',', which begins right at the text
    not yet returned (len(s) - 1 = 0 characters back), yet finds 'e, t', which began in text already
    returned: it does look back, but starts one character too late."""
    if cls is None:
        return False
    ids = tokenizer().encode("one, two")
    assert [tokenizer().decode([t]) for t in ids] == ["one", ",", " two"], "setup: 'one, two' must be three tokens"
    try:
        kept = ["".join(_stream(cls, ids, [s], True)) for s in (",", "e, t")]
    except Exception:
        return False
    return kept == ["one, two", "one, t"]


ENDS_INSIDE = (
    "a stop string may end in the middle of a token: search the text with str.find, not only "
    "decoded.endswith(s), and cut right after its end"
)


def _found_only_at_the_end(cls) -> bool:
    """On 'one two three' the answer cuts right after 'two', which the text ends with once the token
    ' two' is in (so it does find a stop string: one that finds none is named elsewhere), but shows
    all the text with 'tw', which ends inside that token."""
    if cls is None:
        return False
    ids = tokenizer().encode("one two three")
    try:
        kept = ["".join(_stream(cls, ids, [s], True)) for s in ("two", "tw")]
    except Exception:
        return False
    return kept == ["one two", "one two three"]


def _misses_a_stop_begun_in_returned_text(cls) -> bool:
    """On 'one two three' (tokens 'one', ' two', ' three') with stop 'e two', which begins in 'one'
    and ends with the token ' two', the answer shows all of the text: its search never looks back
    into text already returned. (A stop string that ends with a token, so no rule about text past it
    in the same token can be what lost it.)"""
    if cls is None:
        return False
    ids = tokenizer().encode("one two three")
    try:
        return "".join(_stream(cls, ids, ["e two"], True)) == "one two three"
    except Exception:
        return False


SLICE_OFFSET = (
    "an index found in a slice counts from the slice's start: decoded[start:].find(s) is `start` less than the "
    "stop string's place in decoded, so add start back before you cut (or search decoded.find(s, start), whose "
    "index counts from the start of decoded)"
)
SLICE_PROBE = ("I like banana split", ["nan"], "I like b")


def _missed_by_a_slice_offset(pieces: list[str], ids: list[int], stop: list[str], expected: str, cls) -> bool:
    """The pieces join to what `_slice_relative` gives on the same stream (a cut `start` characters
    early), which here is not the answer, and the probe `_cuts_at_a_slice_offset` shows the same."""
    mine = "".join(_stream(_slice_relative, ids, stop, True))
    return mine != expected and "".join(pieces) == mine and _cuts_at_a_slice_offset(cls)


def _cuts_at_a_slice_offset(cls) -> bool:
    """On 'I like banana split' (tokens 'I', ' like', ' banana', ' split') with stop 'nan', the search
    after ' banana' begins at 6 - 3 + 1 = 4; 'nan' is at 9 in the text, at 5 in decoded[4:]. The
    answer cuts at 5 + 3 = 8 ('I like b'), 4 characters early, not at 12 ('I like banan')."""
    if cls is None:
        return False
    text, stop, cut = SLICE_PROBE
    ids = tokenizer().encode(text)
    assert [tokenizer().decode([t]) for t in ids] == ["I", " like", " banana", " split"], "setup: 4 tokens"
    try:
        return "".join(_stream(cls, ids, stop, True)) == cut
    except Exception:
        return False
