"""Exercise 3: a special token in the middle of a stream is no reason to release what is held back.

Where this sits in the course: the hand case "special tokens skipped" (base.py) and the generated
scenes' hints (scenes.py). A special token (<|im_end|>, <|im_start|>, <|endoftext|>) decodes to ''
with skip_special_tokens=True, so its add() brings no text and can release none: what was held back
(the start of a stop string, the first bytes of a character) stays held back until the next tokens
show what it is. Only finish() flushes, and the scheduler, not the detokenizer, decides when a
request ends.

An answer that treats a special token as the end of the answer (its add() flushes, as finish()
does) shows a stop string's first half, which the tokens after the special token may complete, or
half a character. It is told apart by its behaviour: up to the special token its pieces are the
package's, and the add() of the special token returns text, where the package's returns ''.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import REPLACEMENT, _full, probe_pieces
from minisgl_edu.grading.harness import tokenizer
from minisgl_edu.tokenizer.detokenizer import IncrementalDetokenizer as package_detokenizer

SPECIAL_FLUSH = (
    "a special token is no text and does not end the request: its add() decodes to nothing new, so it releases "
    "nothing; keep holding back the start of a stop string or an unfinished character (the next tokens may "
    "complete it), and flush what is held back only in finish()"
)


def flushed_at_special(ids: list[int], want: list[str], got: list[str]) -> bool:
    """The first piece where `got` parts from `want` is the add() of a special token, and it shows more
    text than the reference's pieces by then (a special token's add() returns '' in the reference)."""
    special = set(tokenizer().all_special_ids)
    k = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)
    if k is None or k >= len(ids) or ids[k] not in special:
        return False
    shown_want, shown_got = "".join(want[: k + 1]), "".join(got[: k + 1])
    return len(shown_got) > len(shown_want) and shown_got.startswith(shown_want.rstrip(REPLACEMENT))


def _probes() -> list[tuple[str, list[int], list[str], str]]:
    """(what was held back, ids, stop, text expected) of two streams with <|im_end|> in the middle: after
    'three', the start of the stop string 'three four' that ' four' completes; after the first byte tokens
    of '🚀', which the next one completes."""
    tok = tokenizer()
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    stop_ids = tok.encode("one two three") + [im_end] + tok.encode(" four five")
    rocket = tok.encode("one two 🚀 done")
    cut = next(k for k in range(1, len(rocket)) if _full(rocket[:k]).endswith(REPLACEMENT))
    assert _full(rocket[: cut + 1]).endswith(REPLACEMENT), "setup: '🚀' must take three byte tokens"
    byte_ids = rocket[:cut] + [im_end] + rocket[cut:]
    return [
        ("'three', the start of the stop string 'three four'", stop_ids, ["three four"], "one two "),
        ("the first byte token of '🚀', half a character", byte_ids, [], _full(byte_ids)),
    ]


def check_special_flush(cls) -> None:
    """Raise SPECIAL_FLUSH when, on a probe, the answer's add() of <|im_end|> returns text that the
    package's detokenizer still holds back there (its pieces up to that token being the package's)."""
    tok = tokenizer()
    for held, ids, stop, expected in _probes():
        want = probe_pieces(lambda: package_detokenizer(tok, list(stop)), ids)
        got = probe_pieces(lambda: cls(tok, list(stop)), ids)
        if got is None or not flushed_at_special(ids, want, got):
            continue
        at = next(i for i, t in enumerate(ids) if t in tok.all_special_ids)
        raise Mistake(
            f"stop={stop!r}, tokens {[_full([t]) or tok.convert_ids_to_tokens(t) for t in ids]!r}: at <|im_end|> "
            f"your add() returned {got[at]!r}, which it was holding back ({held}), as if the request had ended "
            f"there. The pieces join to {''.join(got)!r}, expected {expected!r}: the tokens after <|im_end|> "
            "continue the text, and its add() must return ''",
            SPECIAL_FLUSH,
        )
