"""Exercise 3: the answer's first characters are text like any other, a leading space or newline included.

A byte-level tokenizer often begins an answer with ' Hello' or '\\n'. An answer that strips the whitespace
at the start of the first text it returns ("the answer starts at its first word") no longer joins to the
decode of the tokens, and loses a leading newline or the indentation of code.

Text that joins short has other causes too, so this is confirmed by the answer's own pieces: on a small
input of its own (`check_answer_start_kept`, which runs the answer) and on a generated scene's stream
(`start_stripped`), they join to exactly the text with its leading whitespace removed.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import _full, probe_pieces
from minisgl_edu.grading.harness import tokenizer

START_KEPT = (
    "strip nothing: the answer is exactly the decode of its tokens, the space or newline its first token "
    "begins with included"
)
TEXTS = (" Hello world", "\n\ndef f():\n    return 1")


def start_stripped(joined: str, full: str) -> bool:
    """`joined` is `full` with the whitespace at its start removed, and that is not `full`."""
    return joined != full and joined == full.lstrip()


def check_answer_start_kept(cls) -> None:
    """Raise START_KEPT when the answer's pieces on TEXTS join to the text without its leading whitespace."""
    for text in TEXTS:
        ids = tokenizer().encode(text)
        full = _full(ids)
        assert full == text and full != full.lstrip(), "setup: the text must begin with whitespace"
        pieces = probe_pieces(lambda: cls(tokenizer(), []), ids)
        if pieces is None:
            return  # (the case's own checks say what is wrong)
        joined = "".join(pieces)
        if start_stripped(joined, full):
            raise Mistake(
                f"the tokens of {full!r} came out as {joined!r}: the whitespace at the start of the answer was "
                "stripped. The pieces must join to the whole decode, its first space or newline included",
                START_KEPT,
            )
