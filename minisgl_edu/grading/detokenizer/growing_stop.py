"""Exercise 3: the start of a stop string that grows over several tokens, and recurs inside itself.

With stop='red blue red blue' and the tokens of 'Colors: red blue red green', the tail that could
begin the stop string grows token by token: 'red', then 'red blue' (it began before the newest
token's text, and no shorter end of it begins the stop string), then 'red blue red', which ends in a
shorter start of the same stop string, 'red'. The package holds back all of it each time, and lets
it go only when ' green' shows it is no stop string. An answer with either mistake below fails at
its own token: the second mistake after ' blue', the first after the second ' red'.

`check_held_as_it_grows` plays the answer beside the package's detokenizer, token by token. At the
first token after which the answer has shown more, it compares what each holds back and names the
mistake that difference shows:

* the answer holds back a shorter start of the stop string, a tail of the package's: it kept the
  first (shortest) length that fits, not the longest;
* the answer holds back none of a start that began before the newest token's text, though it is
  longer than that text: it looked for the start of a stop string only in the newest token's text.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import HOLD_BACK, _full, _piece
from minisgl_edu.grading.detokenizer.hold_of_one import check_hold_of_one
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as reference

TEXT, STOP = "Colors: red blue red green", "red blue red blue"

LONGEST = (
    "hold back the longest tail that could begin a stop string, not a shorter one: try every length and keep "
    "the largest that fits (no break at the first), since a stop string whose start recurs inside it, like "
    "'abab' after 'aba', has a shorter start ('a') at the end of the longer one"
)
NEWEST = (
    f"{HOLD_BACK} even when it began before the newest token's text: look for the start of a stop string in all "
    "the text not yet returned, not only in the newest token's text, so that text held back stays held while "
    "the next tokens extend the start of a stop string"
)


def growing_stop_ids() -> list[int]:
    """The tokens of TEXT; the setup asserts the words are tokens of their own, and that 'red blue'
    is the only end of 'Colors: red blue' that begins the stop string (so the two mistakes part there)."""
    ids = tokenizer().encode(TEXT)
    words = [_full([t]) for t in ids]
    assert words[2:] == [" red", " blue", " red", " green"], f"setup: {TEXT!r} must end in four word tokens: {words}"
    starts = [k for k in range(1, len(STOP)) if _full(ids[:4]).endswith(STOP[:k])]
    assert starts == [len("red blue")], f"setup: only 'red blue' may begin the stop string there: {starts}"
    return ids


def check_held_as_it_grows(cls, ids: list[int], stop: list[str]) -> None:
    """After every add(), the answer has shown no more than the package: where it has, the tails the
    two hold back name the mistake (module docstring)."""
    tok = tokenizer()
    mine, ref = cls(tok, list(stop)), reference(tok, list(stop))
    shown, ref_shown = "", ""
    for n, t in enumerate(ids):
        shown += _piece(mine.add(t), f"add({t})")
        ref_shown += ref.add(t)
        if len(shown) <= len(ref_shown):
            continue
        decoded, before = _full(ids[: n + 1]), _full(ids[:n])
        held, theirs = decoded[len(ref_shown) :], decoded[len(shown) :] if decoded.startswith(shown) else ""
        newest = decoded[len(before) :] if decoded.startswith(before) else ""
        begun = [s for s in stop if held and s.startswith(held)]
        after = f"after token {n + 1} ({_full([t])!r}) your add() had returned {shown!r}"
        if theirs and held.endswith(theirs) and any(s.startswith(theirs) for s in begun):
            raise Mistake(
                f"{after}, holding back only {theirs!r}; but the text ends in {held!r}, the start of the stop "
                f"string {begun[0]!r}, and {theirs!r} is a shorter start of it at the end of that one. Hold back "
                f"the longest such tail: {held[: len(held) - len(theirs)]!r} is part of the stop string if it follows",
                LONGEST,
            )
        if begun and len(theirs) <= len(newest) < len(held):
            raise Mistake(
                f"{after}: the text ends in {held!r}, the start of the stop string {begun[0]!r}, which began before "
                f"the newest token's text {newest!r}; you let it go although it is still the start of the stop "
                "string, and if the stop string follows, part of it has reached the client",
                NEWEST,
            )
        check_hold_of_one(cls)  # one character held back, whatever the length of the start
        raise Mistake(
            f"{after}: the end of it, {held!r}, could still be the start of a stop string of {stop!r}, so hold it "
            "back until the next tokens show whether the stop string follows",
            HOLD_BACK,
        )
