"""Exercise 3's stretch: the count of text already sent kept in UTF-8 bytes.

Where this sits in the course: the stretch's `_judge` (include_stop.py), for the hand cases and the
generated scenes alike. `sent` is a position in the decoded text, a str indexed by characters. An
answer that moves it on by `len(out.encode())` (bytes) instead of `len(out)` runs ahead of the text
returned after every character of several bytes (é is 2, 北 3, 🚀 4): the next piece begins that many
characters too late, so characters are skipped, or the stream stalls while `sent` is past the end of
the text decoded so far.

Named by its behaviour on a probe with no stop string (so no hold-back rule or stop search is
involved, and every piece is what is decoded and not yet returned): each of the answer's pieces is
the decoded text from the UTF-8 length of all the pieces before it, which is not where it must begin.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import probe_pieces
from minisgl_edu.grading.detokenizer.stop_keeping import reference_stop_keeping
from minisgl_edu.grading.harness import tokenizer

SENT_IN_BYTES = (
    "count the text already sent in characters of the decoded string, len(out), not in bytes, "
    "len(out.encode()): the decoded text is a str indexed by characters, and é, 北 or 🚀 are one character "
    "each but 2, 3 or 4 UTF-8 bytes"
)
PROBE = "café au lait, 北京 ok"


def counted_in_bytes(right: list[str]) -> list[str]:
    """The pieces of an answer that slices the text from a count of the bytes it returned, given the
    right pieces of a stream with no stop string (which return all the text decoded, as it comes)."""
    decoded, sent, out = "", 0, []
    for piece in right:
        decoded += piece
        out.append(decoded[sent:])
        sent += len(out[-1].encode())
    return out


def check_sent_in_bytes(cls) -> None:
    """Raise SENT_IN_BYTES when the answer's pieces on PROBE (no stop string, either flag) are those
    of `counted_in_bytes`, not the right ones."""
    tok = tokenizer()
    ids = tok.encode(PROBE)
    for include in (True, False):
        right = probe_pieces(lambda: reference_stop_keeping(tok, [], include), ids)
        wrong = counted_in_bytes(right)
        assert wrong != right, "setup: counting bytes must lose text on the probe"
        got = probe_pieces(lambda: cls(tok, [], include), ids)
        if got != wrong:
            continue
        k = next(i for i, (a, b) in enumerate(zip(got, right)) if a != b)
        before = "".join(right[:k])
        raise Mistake(
            f"on {PROBE!r} with no stop string (include_stop_str_in_output={include}) your pieces are {got!r}, "
            f"expected {right!r}: after {before!r} ({len(before)} characters, {len(before.encode())} UTF-8 bytes) "
            f"your next piece began at character {len(before.encode())}, as if the count of text sent were in "
            "bytes; it skips characters and stalls while that count is past the end of the text",
            SENT_IN_BYTES,
        )
