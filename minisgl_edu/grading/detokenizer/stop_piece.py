"""Exercise 3, stretch: the piece returned on the token that completes the stop string, with the
flag set. That add() returns everything not yet returned up to right after the stop string, and it
is the answer's last text.

Three mistakes end the answer too early there, and each is named only once it is confirmed:
`slice_after_the_move` reads an answer whose piece there is '' (or taken from a later start): the
add()s before it returned exactly the start of the answer, the piece is a proper end of the piece
expected, and nothing comes after it. Two mistakes give exactly these pieces on every input: `sent`
moved to the cut before the slice is taken, and a guard 'if self.stopped: return ""' run after the
search that sets stopped (it fires on the very call that found the stop string, before any slice).
Only where the answer's `sent` ended up tells them apart, so the probe reads it: at the cut, or
still where the last piece ended. An answer with no `sent` attribute gets a hint that names both.
`cut_one_short` names a cut one character early (the stop string's last index used as an
exclusive end) only when the answer's text ends one character before the end of the stop string
on the failing scene and on a second play ('one two three four' with stop=['four']).
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, pieces_of
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.detokenizer.stop_keeping import reference_stop_keeping
from minisgl_edu.grading.harness import tokenizer

SLICE_FIRST = (
    "take the slice decoded[sent:end] before moving sent to end: on the token that completes the stop string "
    "that add() returns the text from sent up to right after the stop string"
)
GUARD_AFTER_SEARCH = (
    "on the call that finds the stop string, return the text up to right after it: a guard 'if self.stopped: "
    'return ""\' is for the calls after the stop, so it goes before the search that sets stopped, not after it'
)
NO_STOP_PIECE = (
    "on the token that completes the stop string that add() returns the text from sent up to right after the "
    "stop string: take the slice decoded[sent:end] before moving sent, and before any 'if self.stopped: "
    'return ""\' guard'
)
CUT_SHORT = (
    "with the flag set the answer ends with the whole stop string: the cut (an exclusive end) is just past its "
    "last character, not at it"
)
SHORT_PLAY = ("one two three four", ["four"], "one two three fou")  # cut one character short
SLICE_PROBE = ("one two three four", ["hree"], "one two three")  # ' three' brings ' t' before the stop string


def _stop_token(ids: list[int], stop: list[str]) -> int:
    """The index of the token on which the reference (flag set) stops; -1 if it never does."""
    ref = reference_stop_keeping(tokenizer(), list(stop), True)
    for n, t in enumerate(ids):
        ref.add(t)
        if ref.stopped:
            return n
    return -1


def _proper_end_at_stop(pieces: list[str], ids: list[int], stop: list[str], expected: str):
    """(token index, text returned before it, its piece, the piece expected) when the piece of the
    stop token is a proper end of the piece expected ('' or text from a later start), after add()s
    that returned exactly the start of the answer, and nothing follows it; else None."""
    n = _stop_token(ids, stop)
    if n < 0 or n >= len(pieces) - 1:
        return None
    before, got = "".join(pieces[:n]), pieces[n]
    if not expected.startswith(before) or "".join(pieces[n + 1 :]):
        return None
    want = expected[len(before) :]
    return (n, before, got, want) if got != want and want.endswith(got) else None


def _sent_on_the_probe(cls) -> str | None:
    """On SLICE_PROBE, when its stop token's piece is a proper end of the piece expected too: "moved"
    if the answer's `sent` is at the cut afterwards, "unmoved" if it is still where the text returned
    before the stop token ends, "unknown" otherwise (no such attribute); None when the probe does not
    show the mistake (or raises: a probe only confirms)."""
    text, probe, answer = SLICE_PROBE
    probe_ids = tokenizer().encode(text)
    try:
        detok = cls(tokenizer(), list(probe), True)
        confirmed = _proper_end_at_stop(pieces_of(detok, probe_ids), probe_ids, probe, answer)
    except Exception:
        return None
    if not confirmed:
        return None
    sent = getattr(detok, "sent", None)
    if type(sent) is not int:
        return "unknown"
    return {len(answer): "moved", len(confirmed[1]): "unmoved"}.get(sent, "unknown")


def slice_after_the_move(cls, pieces: list[str], ids: list[int], stop: list[str], expected: str, said: str):
    """A Mistake when `_proper_end_at_stop` holds here and on SLICE_PROBE (where an answer that
    drops the stop string returns ' t' on ' three', no end of ' three'), naming the cause that the
    answer's `sent` shows; else None."""
    found = _proper_end_at_stop(pieces, ids, stop, expected)
    sent = _sent_on_the_probe(cls) if found else None
    if not sent:
        return None
    n, before, got, want = found
    what = "''" if not got else f"only {got!r}, its last {len(got)} character(s)"
    text, probe, _ = SLICE_PROBE
    said = (
        f"{said}: token {n + 1} ({_full(ids[n : n + 1])!r}) completes the stop string and ends the answer. Your add() "
        f"had returned {before!r} before it, so that add() returns {want!r}, the rest of the answer up to right after "
        f"the stop string; it returned {what}, and nothing came after (on {text!r} with stop={probe} too). The cut is "
        "right, but "
    )
    if sent == "moved":
        return Mistake(
            f"{said}the piece was sliced from a later start: sent was moved to the cut before decoded[sent:end] was "
            "taken (your sent is at the cut afterwards)",
            SLICE_FIRST,
        )
    if sent == "unmoved":
        return Mistake(
            f"{said}the piece was never taken: your sent stays where the text returned before that token ends, so "
            "that call returned '' before slicing, as a guard 'if self.stopped: return \"\"' placed after the "
            "search that sets stopped does on the very call that found the stop string",
            GUARD_AFTER_SEARCH,
        )
    return Mistake(f"{said}that piece was never returned", NO_STOP_PIECE)


def cut_one_short(cls, pieces: list[str], expected: str, said: str):
    """A Mistake when the answer's text is the answer minus its last character, here and on
    SHORT_PLAY too; else None."""
    text, stop, short = SHORT_PLAY
    if "".join(pieces) != expected[:-1]:
        return None
    try:
        joined = "".join(_stream(cls, tokenizer().encode(text), stop, True))
    except Exception:
        return None
    if joined != short:
        return None
    return Mistake(
        f"{said}: the answer stops 1 character short of the end of the stop string, {expected[-1]!r} is missing; "
        f"on {text!r} with stop={stop} your text is {short!r} too, one character short of '{stop[0]}'. With "
        "include_stop_str_in_output=True the answer ends with the whole stop string",
        CUT_SHORT,
    )
