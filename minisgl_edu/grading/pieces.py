"""Text that makes tokens hard, shared by the generated scenes of the graders that read text
(exercise 1's finish check, exercise 3's detokenizer, the verify step's stop strings).

Where this sits in the course: a scene's output is a few of these pieces joined, cut into the
default model's real tokens. Each piece is there for a trap of the contracts: CJK characters and
emoji of three or four bytes, each byte a token of its own at times (a stop string of few
characters then spans many tokens), flags of two code points, words and digits that merge with
the space before them, a newline pair, text that repeats (a stop string that occurs twice).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PIECES = [
    "one",
    " two",
    " three",
    " four five",
    "2 + 2 = 4",
    " 我爱北京",
    "天安门",
    " 🦀🦀!!",
    " 🇫🇷🇩🇪",
    " 🚀🚀🚀",
    " now",
    " 北京🦀",
    " naïve café",
    "\n\n",
    " END",
    "!!!",
    " ok",
]


def _substring(text: str, a: int, b: int) -> str:
    lo, hi = sorted((a, b))
    return text[lo:hi].strip() or text[lo:hi]


def stretch_of(text: str) -> Any:
    """A strategy of stretches of `text` (maybe empty): stop strings across tokens, ending inside one,
    overlapping each other."""
    return st.builds(_substring, st.just(text), st.integers(0, len(text)), st.integers(0, len(text)))


def stop_strings(text: str, max_size: int = 3) -> Any:
    """A strategy of stop-string lists for an output whose text is `text`: stretches of it, false
    starts (a stretch of it and then a character it does not have next: held back, then released),
    whole pieces (emoji and CJK: many byte tokens for few characters), maybe none."""
    false_start = st.builds(lambda s, c: s + c if s else s, stretch_of(text), st.sampled_from(["?", "X", "三"]))
    one = st.one_of(stretch_of(text), stretch_of(text), false_start, st.sampled_from(PIECES).map(str.strip))
    return st.lists(one, max_size=max_size).map(lambda stops: [s for s in stops if s])
