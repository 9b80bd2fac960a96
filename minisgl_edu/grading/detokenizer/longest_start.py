"""Exercise 3: the tail held back is the longest that could begin ANY stop string of the list.

On 'one two three' with the stop strings 'o!' and 'two three', the token ' two' leaves 'one two',
which ends in 'o', the start of 'o!', and in 'two', a longer start of 'two three' (the next token
completes it). The answer holds back 'two' and shows 'one ', whatever the order of the list. A
student who works the tail out stop string by stop string and keeps the first that fits (the first
listed, or the first whose start the text ends with), or who keeps the shortest start of all, holds
back only 'o' and shows 'tw' of the stop string. Played in both list orders, the pieces tell which:
a wrong cut in one order only is a choice that follows the list.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import HOLD_BACK, pieces_of
from minisgl_edu.grading.detokenizer.hold_of_one import check_hold_of_one
from minisgl_edu.grading.harness import tokenizer

TEXT = "one two three"
ORDERS = (["o!", "two three"], ["two three", "o!"])
EXPECTED = "one "  # after ' two', and in the end: 'two' is held back, and 'two three' completes
SHORT = "one tw"  # after ' two', only 'o', the start of 'o!', held back: 'tw' of 'two three' went out


def check_longest_start_of_all(cls) -> None:
    """Raise a Mistake naming a held-back tail that is not the longest start of all the stop strings,
    where the answer has shown 'tw' of 'two three' after ' two' (its first two pieces), in either order
    of the list."""
    ids = tokenizer().encode(TEXT)
    shown = [(stops, "".join(pieces_of(cls(tokenizer(), list(stops)), ids)[:2])) for stops in ORDERS]
    short = [stops for stops, got in shown if got == SHORT]
    if not short:
        return  # right, or another mistake that the case's other checks name
    check_hold_of_one(cls)  # only 'o' held back because exactly one character always is
    in_one_order = len(short) == 1 and shown[1][1] == EXPECTED
    raise Mistake(
        f"stop={short[0]}: after ' two' the text 'one two' ends in 'o', the start of 'o!', and in 'two', a longer "
        f"start of 'two three', which the next token completes. After ' two' your add() had returned {SHORT!r}, "
        f"expected {EXPECTED!r}: you held back only 'o', so 'tw' of the stop string was shown"
        + (
            "; with the list in the other order you hold back 'two': the order of the list decided"
            if in_one_order
            else ""
        ),
        f"{HOLD_BACK}: the longest tail that could begin any of them (here 'two'), not a shorter one"
        + (", whatever the order of the list (not the first stop string whose start fits)" if in_one_order else ""),
    )
