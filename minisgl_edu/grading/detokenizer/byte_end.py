"""Exercise 3's stretch: a cut whose end counts the stop string in bytes. With the flag set the
answer ends right after the stop string, at its start plus len(s), its length in characters (the
decoded text is a str, indexed by characters). An answer that adds len(s.encode()), the length in
UTF-8 bytes, cuts a stop string holding 'é' (2 bytes), '京' (3) or '🚀' (4) that many characters
too late, and text after the stop string leaks; an ASCII stop string, one byte per character,
hides it.

`_cut_in_bytes` names it when the pieces join to what the reference with that one mistake
(`_end_in_bytes`) gives on the same stream, which is not the answer, and a probe of the answer
shows the same: 'naïve façade done' (tokens 'na', 'ïve', ' façade', ' done') with stop ['ç'] joins
to 'naïve faça', one character past 'ç', not 'naïve faç'.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.missed_stop import _stream
from minisgl_edu.grading.detokenizer.stop_keeping import _end_in_bytes
from minisgl_edu.grading.harness import tokenizer

IN_BYTES = (
    "the cut is at the stop string's start + len(s), its length in characters: len(s.encode()) counts UTF-8 "
    "bytes, more than the characters of a stop string with é, 京 or 🚀, and the str you cut is indexed by characters"
)
BYTE_PROBE = ("naïve façade done", ["ç"], "naïve faça")


def _cuts_in_bytes(cls) -> bool:
    """The probe: on 'naïve façade done' with stop ['ç'] (2 bytes, 1 character, completed by the token
    ' façade'), the answer's pieces join to 'naïve faça', one character past the stop string."""
    if cls is None:
        return False
    text, stop, cut = BYTE_PROBE
    ids = tokenizer().encode(text)
    assert [tokenizer().decode([t]) for t in ids] == ["na", "ïve", " façade", " done"], "setup: 4 tokens"
    try:
        return "".join(_stream(cls, ids, stop, True)) == cut
    except Exception:
        return False


def cut_in_bytes(pieces: list[str], ids: list[int], stop: list[str], expected: str, winner: str, said: str, cls):
    """A Mistake naming the cut counted in bytes, after `said` (what leaked, where), when the pieces
    are those of `_end_in_bytes` on this stream and the probe agrees; else None."""
    mine = "".join(_stream(_end_in_bytes, ids, stop, True))
    if mine == expected or "".join(pieces) != mine or not _cuts_in_bytes(cls):
        return None
    text, probe, cut = BYTE_PROBE
    return Mistake(
        f"{said}. Your cut counts the stop string in UTF-8 bytes: {winner!r} has {len(winner)} characters but "
        f"{len(winner.encode())} bytes (len(s.encode())), so the cut lands past its end. On {text!r} with "
        f"stop={probe} your pieces join to {cut!r}, one character past 'ç' (2 bytes, 1 character)",
        IN_BYTES,
    )
