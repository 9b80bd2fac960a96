"""Exercise 3, stretch: each object keeps its own include_stop_str_in_output. The detokenizer worker
builds one object per request, and requests with and without the flag stream at the same time. Two
objects alive at once, one with the flag and one without, are given the same tokens in turn; when
each gives the right answer built alone but not beside the other, one object's flag changed the
other's, and the hint says so.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

TEXT, STOP = "one two three four five", ["three four"]
ANSWER = {True: "one two three four", False: "one two "}
FLAGS_SHARED = (
    "each object keeps its own include_stop_str_in_output (self.include_stop_str_in_output = ..., never on "
    "the class): requests with and without the flag stream at the same time"
)


def _side_by_side(cls, flags: tuple[bool, bool], ids: list[int]) -> list[str]:
    """The joined text of two objects built in turn with `flags`, given each token in turn."""
    objs = [cls(tokenizer(), list(STOP), flag) for flag in flags]
    pieces: list[list[str]] = [[], []]
    for t in ids:
        for obj, got in zip(objs, pieces):
            got.append(obj.add(t))
    for obj, got in zip(objs, pieces):
        got.append(obj.finish())
    return ["".join(p if isinstance(p, str) else "" for p in got) for got in pieces]


def check_flags_apart(cls) -> None:
    """Raise when two objects alive at once, with different flags, do not each give what they give
    built alone (which must be the right answer: else the case's other plays say what is wrong)."""
    ids = tokenizer().encode(TEXT)
    for flag in (True, False):
        alone = pieces_of(cls(tokenizer(), list(STOP), flag), ids)
        if "".join(alone) != ANSWER[flag]:
            return
    for flags in ((True, False), (False, True)):
        got = _side_by_side(cls, flags, ids)
        if got != [ANSWER[f] for f in flags]:
            raise Mistake(
                f"stop={STOP}, two objects alive at once, the first built with include_stop_str_in_output="
                f"{flags[0]}, the second with {flags[1]}, each given the tokens of {TEXT!r} in turn: their "
                f"pieces join to {got[0]!r} and {got[1]!r}, expected {ANSWER[flags[0]]!r} and "
                f"{ANSWER[flags[1]]!r}, what each gives built alone. One object's flag changed the other's "
                "answer: the flag is shared between objects",
                FLAGS_SHARED,
            )
