"""Exercise 3 and its stretch: a window that decodes to no text at all.

add() decodes the window ids[window:] with skip_special_tokens=True. When the first generated token
is a special token (an EOS the model emits at once), that decode is '', and an answer that tests
"whole characters" by reading the window's last character (`now[-1] != '\\ufffd'`) raises
IndexError before it compares lengths; `now.endswith('\\ufffd')` is False for '' and never raises.

IndexError has other causes too, so `check_empty_window` names this one only when the stream stopped
with an IndexError AND the answer raises it on a probe of its own, a lone EOS, but not on a lone
ordinary token. It runs inside the generated scenes' play (scenes.py), where this answer fails.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.detokenizer.common import pieces_of
from minisgl_edu.grading.harness import tokenizer

EMPTY_WINDOW = (
    "the window can decode to no text at all: a special token (e.g. an EOS as the first token) decodes to '' "
    "with skip_special_tokens=True, so test the decoded text without indexing it (now.endswith('\\ufffd'), "
    "or `now and now[-1] ...`), and return ''"
)
ORDINARY = "one"  # a word of one token, whose window decodes to text


def _raises_index_error(cls, ids: list[int], stretch: bool) -> bool:
    tok = tokenizer()
    try:
        pieces_of(cls(tok, [], False) if stretch else cls(tok, []), ids)
    except IndexError:
        return True
    except Exception:
        return False
    return False


def check_empty_window(cls, crash: BaseException, stretch: bool = False) -> None:
    """Raise the mistake when `crash` is an IndexError and the answer raises one on a lone EOS (a window
    that decodes to '') but not on a lone ordinary token (`stretch`: build it with the flag unset)."""
    tok = tokenizer()
    eos = tok.eos_token_id
    if (
        isinstance(crash, IndexError)
        and _raises_index_error(cls, [eos], stretch)
        and not _raises_index_error(cls, tok.encode(ORDINARY), stretch)
    ):
        raise Mistake(
            f"your code raised IndexError: {crash}. Given the EOS token (id {eos}) as its first token, whose "
            f"window decodes to '' (no text), your add() raises IndexError, and given {ORDINARY!r} it does not: "
            "the code reads a character of the decoded text without testing that there is one",
            EMPTY_WINDOW,
        ) from crash
